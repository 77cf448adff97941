package web

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/views"
)

func TestDiagramKeyLabels(t *testing.T) {
	t.Parallel()
	op := &sim.Operation{ID: "op-1", OrderID: "order-42", Amount: 1500, Attempts: []sim.Attempt{
		{N: 1, Key: dgPtr(dgKey), Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged},
		{N: 2, Key: dgPtr("order-42"), Fate: sim.FateOK, Status: 200, Outcome: sim.OutcomeDuplicate},
		{N: 3, Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged},
	}}
	for _, tc := range []struct {
		lang   views.Lang
		labels []string
		tip    string
	}{
		{views.English, []string{"key 3f2a9c1e…", "key order-42", "no key"}, "Idempotency-Key: "},
		{views.Russian, []string{"ключ 3f2a9c1e…", "ключ order-42", "без ключа"}, "Ключ идемпотентности: "},
	} {
		t.Run(string(tc.lang), func(t *testing.T) {
			doc, _ := dgRenderLang(t, tc.lang, op)
			got := dgTexts(doc.Find("[data-testid=attempt] [data-mark=request] .sd-key"))
			if diff := cmp.Diff(tc.labels, got); diff != "" {
				t.Errorf("key labels (-want +got):\n%s", diff)
			}
			// The whole key is at hand as the arrow's tooltip.
			if got, want := doc.Find("[data-testid=attempt] [data-mark=request] > title").First().Text(), tc.tip+dgKey; got != want {
				t.Errorf("tooltip: got %q, want %q", got, want)
			}
			// Without deliveries recorded, the attempt's outcome still draws the server's work.
			if got := doc.Find("[data-mark=commit]").Length(); got != 2 {
				t.Errorf("commit marks: got %d, want 2", got)
			}
			if tc.lang == views.Russian {
				dgNoEnglish(t, doc, op)
			}
		})
	}
}

func TestDiagramEscapesUserText(t *testing.T) {
	t.Parallel()
	const (
		key   = `"><img src=x onerror=alert(1)>`
		order = `<script>alert(1)</script>`
		msg   = `<img src=y onerror=alert(2)>`
	)
	op := &sim.Operation{ID: "op-1", OrderID: order, Amount: 1500, KeyStrategy: sim.KeyNatural, Attempts: []sim.Attempt{
		{N: 1, Key: dgPtr(key), Fate: sim.FateRequestLost, Error: dgPtr(msg), Outcome: sim.OutcomeNotReached},
		{N: 2, Key: dgPtr("<b>k</b>"), Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged},
	}}
	for _, tc := range []struct {
		lang     views.Lang
		tip, key string
	}{
		{views.English, "Idempotency-Key: ", "key "},
		{views.Russian, "Ключ идемпотентности: ", "ключ "},
	} {
		t.Run(string(tc.lang), func(t *testing.T) {
			doc, html := dgRenderLang(t, tc.lang, op)
			for _, tag := range []string{"img", "script", "b"} {
				if n := doc.Find(tag).Length(); n != 0 {
					t.Errorf("%d <%s> elements made of user text", n, tag)
				}
			}
			for _, raw := range []string{"<img", "<script", "<b>"} {
				if strings.Contains(html, raw) {
					t.Errorf("output holds raw %q", raw)
				}
			}
			if got := doc.Find("figcaption strong").Text(); got != order {
				t.Errorf("order id: got %q, want %q", got, order)
			}
			if got, want := doc.Find("[data-mark=request] > title").First().Text(), tc.tip+key; got != want {
				t.Errorf("key tooltip: got %q, want %q", got, want)
			}
			if got, want := doc.Find("[data-mark=request] .sd-key").First().Text(), tc.key+`"><img s…`; got != want {
				t.Errorf("key label: got %q, want %q", got, want)
			}
		})
	}
}
