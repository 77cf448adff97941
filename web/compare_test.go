package web_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
)

// Each cell of the side-by-side grid is what the API gives when the same
// script is played by hand in a lab with that cell's settings.
func TestCompareCellsMatchTheAPIByHand(t *testing.T) {
	s := startServer(t)
	p, _ := openPage(t, s, "")
	resp, body := p.post("/compare", nil, false)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("compare: %d %.300s", resp.StatusCode, body)
	}
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(body))
	grid := map[string][2]int64{}
	doc.Find(`[data-testid="compare-cell"]`).Each(func(_ int, c *goquery.Selection) {
		n, _ := strconv.ParseInt(c.AttrOr("data-count", ""), 10, 64)
		total, _ := strconv.ParseInt(c.AttrOr("data-total", ""), 10, 64)
		grid[c.AttrOr("data-key-strategy", "")+"/"+c.AttrOr("data-protection", "")] = [2]int64{n, total}
	})
	if len(grid) != 25 {
		t.Fatalf("%d cells, want 25", len(grid))
	}
	byHand := map[string][2]int64{}
	script := sim.DefaultScript()
	for _, k := range sim.KeyStrategies {
		for _, pr := range sim.Protections {
			lab := s.newLab(fmt.Sprintf(`{"protection":%q,"key_strategy":%q}`, pr, k))
			for _, st := range script.Steps {
				switch st.Action {
				case "charge":
					s.operation(lab, fmt.Sprintf(`{"order_id":%q,"amount":%d,"fate":%q}`, script.OrderID, script.Amount, st.Fate))
				case "retry":
					s.retry(lab, "latest", fmt.Sprintf(`{"with_key":%t,"fate":%q}`, st.WithKey, st.Fate))
				}
			}
			l := s.ledger(lab)
			byHand[string(k)+"/"+string(pr)] = [2]int64{l.Count, l.Total}
		}
	}
	if d := cmp.Diff(byHand, grid); d != "" {
		t.Errorf("grid differs from the script by hand (-by hand +grid):\n%s", d)
	}
	// and the lessons show in it: no protection double-charges, a natural
	// key refuses the second purchase, a UUID per operation under replay is right
	for cell, want := range map[string]int64{"none/none": 4, "natural/unique": 1, "uuid/replay": 2, "uuid-per-request/replay": 4} {
		if grid[cell][0] != want {
			t.Errorf("%s: %d charges, want %d", cell, grid[cell][0], want)
		}
	}
}

// The grid writes its amounts as the reader's language does; its data
// attributes stay plain numbers.
func TestCompareAmountsInTheReadersLanguage(t *testing.T) {
	s := startServer(t)
	p, _ := openPage(t, s, "")
	for _, tc := range []struct {
		lang, script, cell string
	}{
		{"en", "charge order-42 ₽1,500, the answer is lost, the client retries twice, then the customer buys the same thing again. A correct server ends with 2 charges, ₽3,000.", "2 · ₽3,000"},
		{"ru", "списать 1\u00a0500\u00a0₽ за order-42, ответ теряется, клиент дважды повторяет, затем покупатель покупает то же самое ещё раз. Правильный сервер заканчивает с 2 списаниями на 3\u00a0000\u00a0₽.", "2 · 3\u00a0000\u00a0₽"},
	} {
		resp, body := p.post("/compare?lang="+tc.lang, nil, false)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: compare: %d %.300s", tc.lang, resp.StatusCode, body)
		}
		doc, _ := goquery.NewDocumentFromReader(strings.NewReader(body))
		if got := doc.Find("article.compare > p").First().Text(); !strings.HasSuffix(got, tc.script) {
			t.Errorf("%s: script %q, want it to end %q", tc.lang, got, tc.script)
		}
		c := doc.Find(`[data-testid="compare-cell"][data-key-strategy="uuid"][data-protection="replay"]`)
		if got := c.Find("strong").Text(); got != tc.cell {
			t.Errorf("%s: uuid/replay cell %q, want %q", tc.lang, got, tc.cell)
		}
		if got := c.AttrOr("data-total", ""); got != "3000" {
			t.Errorf("%s: data-total %q, want 3000", tc.lang, got)
		}
	}
}
