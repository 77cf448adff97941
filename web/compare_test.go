package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/sim/compare"
	"idemlab/sim/labs"
	"idemlab/web"
)

// Each cell of the side-by-side grid is what the API gives when the same
// script is played by hand in a lab with that cell's settings; and the
// cell's link, a scenario, rebuilds a lab of the reader's own with those
// settings and that script, which ends with the cell's ledger.
func TestCompareCellsMatchTheAPIByHand(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{}, web.Options{LabRate: web.Rate{Burst: -1}, ScenarioRate: web.Rate{Burst: -1}}), withParts())
	p, _ := openPage(t, s, "")
	doc, _ := p.compare("")
	grid, links := map[string][2]int64{}, map[string]string{}
	doc.Find(`[data-testid="compare-cell"]`).Each(func(_ int, c *goquery.Selection) {
		n, _ := strconv.ParseInt(c.AttrOr("data-count", ""), 10, 64)
		total, _ := strconv.ParseInt(c.AttrOr("data-total", ""), 10, 64)
		name := c.AttrOr("data-key-strategy", "") + "/" + c.AttrOr("data-protection", "")
		grid[name], links[name] = [2]int64{n, total}, c.Find("a").AttrOr("href", "")
	})
	if want := len(sim.Protections) * len(sim.KeyStrategies); len(grid) != want {
		t.Fatalf("%d cells, want %d", len(grid), want)
	}
	byHand, byLink := map[string][2]int64{}, map[string][2]int64{}
	script := sim.DefaultScript()
	for _, k := range sim.KeyStrategies {
		for _, pr := range sim.Protections {
			name := string(k) + "/" + string(pr)
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
			byHand[name] = [2]int64{l.Count, l.Total}

		}
	}
	if d := cmp.Diff(byHand, grid); d != "" {
		t.Errorf("grid differs from the script by hand (-by hand +grid):\n%s", d)
	}
	// and the lessons show in it: no protection double-charges, a natural
	// key refuses the second purchase, a UUID per operation under replay is
	// right. These cells' links, one of each cause, rebuild the same lab
	// (each link is a scenario of its own; rebuilding all 30 would play
	// the script a third time over).
	lessons := map[string]int64{"none/none": 4, "natural/unique": 1, "uuid/replay": 2, "uuid-per-request/replay": 4, "uuid/set-nx": 2, "none/set-nx": 4}
	seen := map[string]bool{}
	for name, link := range links {
		if seen[link] {
			t.Errorf("%s: the link %s is another cell's too", name, link)
		}
		seen[link] = true
	}
	for cell, want := range lessons {
		if grid[cell][0] != want {
			t.Errorf("%s: %d charges, want %d", cell, grid[cell][0], want)
		}
		rebuilt := s.rebuild(links[cell])
		settings := s.must(http.StatusOK, "GET", rebuilt+"/settings", "").JSON(t)
		if got := settings["key_strategy"].(string) + "/" + settings["protection"].(string); got != cell {
			t.Errorf("%s: the link rebuilds a lab of %s", cell, got)
		}
		l := s.ledger(rebuilt)
		byLink[cell] = [2]int64{l.Count, l.Total}
		if byLink[cell] != grid[cell] {
			t.Errorf("%s: the rebuilt lab has %v, the grid %v", cell, byLink[cell], grid[cell])
		}
	}
}

// rebuild opens a scenario link as a new reader does and returns the API
// address of the lab it built for them.
func (s *testServer) rebuild(link string) string {
	s.tb.Helper()
	if !strings.HasPrefix(link, "/s/") {
		s.tb.Fatalf("the link %q is no scenario link", link)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(s.URL + link)
	if err != nil {
		s.tb.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/labs/") {
		s.tb.Fatalf("%s: %d to %q, want 303 to a new lab", link, resp.StatusCode, loc)
	}
	return "/api/v1/labs/" + strings.TrimPrefix(loc, "/labs/")
}

// compare presses the page's Compare button (a plain form post) and follows
// the answer to the run's own address, as a browser does; it returns the
// page there and its address.
func (p *page) compare(query string) (*goquery.Document, string) {
	p.t.Helper()
	resp, body := p.post("/compare"+query, nil, false)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/compare/") {
		p.t.Fatalf("compare: %d to %q, want 303 to the run's address\n%.300s", resp.StatusCode, loc, body)
	}
	return getPage(p.t, p.client, p.s.URL+loc, ""), loc
}

// A comparison has an address of its own: reloading it, or opening it in
// another browser, shows the same run and runs nothing again; the API reads
// it there too.
func TestCompareIsAPageWithItsOwnAddress(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	first, loc := p.compare("")
	labs := s.House.Labs.Count()
	for range 3 {
		again := getPage(t, http.DefaultClient, s.URL+loc, "en")
		if a, b := first.Find(`[data-testid="compare-grid"]`).Text(), again.Find(`[data-testid="compare-grid"]`).Text(); a != b || a == "" {
			t.Errorf("the reloaded page shows another grid:\n%s\nwant\n%s", b, a)
		}
	}
	if got := s.House.Labs.Count(); got != labs {
		t.Errorf("labs %d → %d: reloading the comparison ran it again", labs, got)
	}
	if href := first.Find(`[data-testid="compare-link"]`).AttrOr("href", ""); href != loc {
		t.Errorf("the page's own link %q, want %q", href, loc)
	}
	api := s.must(http.StatusOK, "GET", "/api/v1"+loc, "").JSON(t)
	if cells, _ := api["cells"].([]any); len(cells) != len(sim.Protections)*len(sim.KeyStrategies) {
		t.Errorf("the API reads %d cells at %s, want %d", len(cells), loc, len(sim.Protections)*len(sim.KeyStrategies))
	}
	checkProblem(t, s.do("GET", "/api/v1/compare/AAAAAAAAAAAAAAAAAAAAAA", ""), http.StatusNotFound, "/problems/not-found", "")
}

// Each cell names the real cause of its outcome: with no key, replay answers
// 400 (nothing charged, not a refused purchase); a natural key refuses the
// second purchase as a duplicate; no protection charges twice; on a server
// run without the key-value store of set-nx, its charges are answered 503
// (nothing was refused as a duplicate). The grid writes its amounts as the
// reader's language does, its data attributes plain numbers: one
// comparison, read at its address in each language.
func TestCompareNamesTheCause(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	_, loc := p.compare("")
	doc := getPage(t, p.client, s.URL+loc+"?lang=en", "")
	for cell, want := range map[string][2]string{
		"none/replay":    {compare.CauseRejected, "no key → 400, nothing charged"},
		"natural/unique": {compare.CauseRefused, "a purchase refused as a duplicate"},
		"hash/replay":    {compare.CauseReplayed, "answered with the first one's replay"},
		"none/none":      {compare.CauseDouble, "double charge"},
		"uuid/replay":    {compare.CauseRight, "as it should"},
		"uuid/set-nx":    {compare.CauseUnavailable, "did not answer → 503, not charged"},
	} {
		k, pr, _ := strings.Cut(cell, "/")
		c := doc.Find(fmt.Sprintf(`[data-testid="compare-cell"][data-key-strategy=%q][data-protection=%q]`, k, pr))
		if got := c.AttrOr("data-cause", ""); got != want[0] {
			t.Errorf("%s: cause %q, want %q", cell, got, want[0])
		}
		if !strings.Contains(c.Text(), want[1]) {
			t.Errorf("%s says %q, want %q", cell, strings.TrimSpace(c.Text()), want[1])
		}
	}
	for _, tc := range []struct {
		lang, script, cell string
	}{
		{"en", "charge order-42 ₽1,500, the answer is lost, the client retries twice, then the customer buys the same thing again. A correct server ends with 2 charges, ₽3,000.", "2 · ₽3,000"},
		{"ru", "списать 1\u00a0500\u00a0₽ за order-42, ответ теряется, клиент дважды повторяет, затем покупатель покупает то же самое ещё раз. Правильный сервер заканчивает с 2 списаниями на 3\u00a0000\u00a0₽.", "2 · 3\u00a0000\u00a0₽"},
	} {
		doc := getPage(t, p.client, p.s.URL+loc+"?lang="+tc.lang, "")
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

// A shared comparison shows results and hands out no lab: neither its page
// nor the API names the labs behind its cells, whose links rebuild labs of
// the reader's own instead; and those labs are gone once the results are
// read, so comparisons never fill the server (five in a row on a server
// of 35 labs at most).
func TestCompareHandsOutNoLabs(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{MaxLabs: 35}, web.Options{CompareRate: web.Rate{Burst: -1}}))
	p, _ := openPage(t, s, "")
	n0 := s.House.Labs.Count()
	// Each comparison runs 39 labs, more than MaxLabs: it fits only if
	// its cells' labs go as their results are read.
	for i := range 2 {
		got := s.must(http.StatusOK, "POST", "/api/v1/compare", "").JSON(t)
		for _, c := range got["cells"].([]any) {
			cell := c.(map[string]any)
			if _, ok := cell["lab"]; ok {
				t.Fatalf("comparison %d: a cell names its lab: %v", i+1, cell)
			}
			if u, _ := cell["scenario_url"].(string); !strings.HasPrefix(u, "/s/") {
				t.Errorf("comparison %d: a cell's scenario_url %v, want a /s/ link", i+1, cell["scenario_url"])
			}
		}
		if n := s.House.Labs.Count(); n != n0 {
			t.Errorf("comparison %d left %d labs, want none", i+1, n-n0)
		}
	}
	doc, loc := p.compare("")
	if html, _ := doc.Html(); strings.Contains(html, "/labs/") {
		t.Errorf("the comparison's page links to a lab:\n%s", html)
	}
	if n := doc.Find(`[data-testid="compare-cell"] a[href^="/s/"]`).Length(); n != len(sim.Protections)*len(sim.KeyStrategies) {
		t.Errorf("%d cells link to a scenario, want every one", n)
	}
	if raw := s.must(http.StatusOK, "GET", "/api/v1"+loc, "").Body; strings.Contains(string(raw), `"lab"`) {
		t.Errorf("the API's comparison names a lab: %s", raw)
	}
	var kept int
	if err := s.Store.QueryRow(context.Background(), `SELECT COUNT(*) FROM comparisons WHERE result LIKE '%"lab"%'`).Scan(&kept); err != nil || kept != 0 {
		t.Errorf("%d comparisons keep their labs' ids (%v)", kept, err)
	}
}

// GET /compare, where a form's address leads a reader who types it or
// reloads it, is a small page in the reader's language with the button
// that runs a comparison, not a "method not allowed".
func TestCompareAddressOffersTheButton(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, lang := range []string{"en", "ru"} {
		r := s.must(http.StatusOK, "GET", "/compare?lang="+lang, "", "Accept", "text/html")
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("%s: Content-Type %q", lang, ct)
		}
		doc := getPage(t, http.DefaultClient, s.URL+"/compare?lang="+lang, "")
		if got := doc.Find("html").AttrOr("lang", ""); got != lang {
			t.Errorf("the page's language %q, want %s", got, lang)
		}
		form := doc.Find(`form[method="post"][action="/compare"]`)
		if form.Find(`button[data-testid="compare"]`).Length() != 1 {
			t.Errorf("%s: no Compare button posting to /compare", lang)
		}
		if lang == "ru" {
			for _, w := range englishOn(doc, "") {
				t.Errorf("the Russian page shows %q", w)
			}
		}
	}
	s.must(http.StatusOK, "HEAD", "/compare", "")
}
