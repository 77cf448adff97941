package web_test

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// Every hook of SPEC.md's dashboard table is on the page.
func TestPageHasEveryHook(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	_, doc := openPage(t, s, "")
	for _, id := range []string{"order-id", "amount", "fire-charge", "network", "key-strategy", "protection",
		"retry", "retry-without-key", "race", "race-count", "auto-retry", "payments-table", "total-count",
		"total-amount", "sequence-diagram", "event-log", "reset", "reset-confirm", "new-lab"} {
		if doc.Find(`[data-testid="`+id+`"]`).Length() == 0 {
			t.Errorf("no element with data-testid=%q", id)
		}
	}
	for _, id := range []string{"network", "key-strategy", "protection"} {
		if n := doc.Find(`select[data-testid="` + id + `"] option`).Length(); n < 5 {
			t.Errorf("%s: a select with %d options, want at least 5", id, n)
		}
	}
}

// Without JavaScript, plain form posts fire a charge and reset the lab.
func TestFormsWorkWithoutJavaScript(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, `{"network":"response-lost"}`)
	form := url.Values{"order_id": {"order-42"}, "amount": {"1500"}}
	resp, _ := p.post(p.path+"/charge", form, false)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != p.path {
		t.Fatalf("charge: %d to %q, want 303 back to the page", resp.StatusCode, resp.Header.Get("Location"))
	}
	p.post(p.path+"/retry", url.Values{"with_key": {"true"}}, false)
	doc := p.get()
	if got := text(doc, "total-count"); got != "2" {
		t.Errorf("total-count %q, want 2", got)
	}
	if doc.Find(`[data-testid="double-charge-alert"]`).Length() != 1 {
		t.Error("no double-charge alert after a double charge")
	}
	resp, _ = p.post(p.path+"/reset", nil, false)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("reset: %d", resp.StatusCode)
	}
	if got := text(p.get(), "total-count"); got != "0" {
		t.Errorf("after reset: total-count %q", got)
	}
}

// htmx posts get the lab's regions back as hx-partials.
func TestHtmxPostAnswersWithPartials(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	resp, body := p.post(p.path+"/charge", url.Values{"order_id": {"order-7"}, "amount": {"990"}}, true)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("htmx charge: %d %s", resp.StatusCode, body)
	}
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(body))
	if n := doc.Find("hx-partial").Length(); n < 3 {
		t.Errorf("%d partials, want the ledger, diagram and log at least", n)
	}
	if got := text(doc, "total-amount"); got != "990" {
		t.Errorf("total-amount %q, want 990", got)
	}
}

// A refused order id is shown back as text, never as markup.
func TestRefusedOrderIDIsText(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	evil := `<img src=x onerror=alert(1)>`
	resp, body := p.post(p.path+"/charge", url.Values{"order_id": {evil}, "amount": {"1"}}, true)
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422", resp.StatusCode)
	}
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(body))
	if doc.Find("img").Length() != 0 {
		t.Errorf("the refused order id became markup: %s", body)
	}
	if !strings.Contains(doc.Find("#charge-notice").Text(), evil) { // beside the Charge button
		t.Errorf("the notice does not quote the refused id as text: %s", body)
	}
	if l := s.ledger("/api/v1/labs/" + strings.TrimPrefix(p.path, "/labs/")); l.Count != 0 {
		t.Errorf("%d payments after a refused charge", l.Count)
	}
}

// The settings form sets what it sends; a bad value is refused whole.
func TestSettingsForm(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	form := url.Values{"protection": {"replay"}, "key_strategy": {"uuid"}, "network": {"slow"}, "retry_auto": {"on"},
		"max_attempts": {"3"}, "base_ms": {"100"}, "cap_ms": {"900"}, "jitter": {"equal"}, "client_timeout_ms": {"700"},
		"server_delay_ms": {"20"}, "check_gap_ms": {"5"}}
	if resp, body := p.post(p.path+"/settings", form, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("settings: %d %s", resp.StatusCode, body)
	}
	api := "/api/v1/labs/" + strings.TrimPrefix(p.path, "/labs/")
	got := s.must(http.StatusOK, "GET", api+"/settings", "").JSON(t)
	if got["protection"] != "replay" || got["key_strategy"] != "uuid" || got["network"] != "slow" ||
		got["retry"].(map[string]any)["mode"] != "auto" || got["client_timeout_ms"] != 700.0 {
		t.Errorf("settings after the form: %v", got)
	}
	form.Set("protection", "bogus")
	form.Del("retry_auto")
	if resp, _ := p.post(p.path+"/settings", form, true); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("bogus protection: %d, want 422", resp.StatusCode)
	}
	if again := s.must(http.StatusOK, "GET", api+"/settings", "").JSON(t); again["protection"] != "replay" || again["retry"].(map[string]any)["mode"] != "auto" {
		t.Errorf("a refused form changed settings: %v", again)
	}
}

// New private lab: a fresh lab, its address ready to share.
func TestNewLabForm(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	resp, _ := p.post("/labs", nil, false)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/labs/") || loc == p.path {
		t.Fatalf("new lab: %d to %q", resp.StatusCode, loc)
	}
	p.path = loc
	doc := p.get()
	share, _ := doc.Find("#share-url").Attr("value")
	if !strings.HasSuffix(share, loc) {
		t.Errorf("share URL %q does not end with %q", share, loc)
	}
}

// Every open page of a lab hears of a change over SSE: first the whole
// state, then each change.
func TestEventsStreamChanges(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	api := s.newLab("")
	next := liveStream(t, s, api, "en")
	if first := next(); !strings.Contains(first, `data-testid="total-count">0<`) {
		t.Fatalf("first message is not the lab's state: %.300s", first)
	}
	s.operation(api, `{"order_id":"order-42","amount":1500}`)
	for m := next(); !strings.Contains(m, `data-testid="total-count">1<`); m = next() {
		if m == "" {
			t.Fatal("the stream ended before the change came")
		}
	}
}

// The page needs no inline script or style (the CSP forbids them) and no
// other host; its first load stays under 100 KB transferred, gzip on.
func TestPageIsSelfContainedAndLight(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	_, doc := openPage(t, s, "")
	if n := doc.Find("script:not([src])").Length(); n > 0 {
		t.Errorf("%d inline scripts", n)
	}
	doc.Find("*").Each(func(_ int, el *goquery.Selection) {
		for _, a := range el.Nodes[0].Attr {
			if a.Key == "style" || strings.HasPrefix(a.Key, "on") || strings.HasPrefix(a.Key, "hx-on") {
				t.Errorf("<%s %s=%q>: inline code or style", el.Nodes[0].Data, a.Key, a.Val)
			}
		}
	})
	var assets []string
	doc.Find("script[src], link[rel=stylesheet]").Each(func(_ int, el *goquery.Selection) {
		u := el.AttrOr("src", el.AttrOr("href", ""))
		if !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") {
			t.Errorf("asset %q is not of this server", u)
		}
		assets = append(assets, u)
	})
	total := 0
	for _, u := range append([]string{"/"}, assets...) {
		req, _ := http.NewRequest("GET", s.URL+u, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", u, resp.StatusCode)
		}
		if len(b) > 1400 && resp.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: %d bytes sent without gzip", u, len(b))
		}
		total += len(b)
	}
	if total > 100<<10 {
		t.Errorf("first load transfers %d bytes, want under 100 KB", total)
	}
	t.Logf("first load: %d bytes over %d requests", total, len(assets)+1)
	if csp := s.do("GET", "/", "").Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
}

// The table shows the newest 100 payments and says how many there are.
func TestLedgerShowsTheLast100(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	api := "/api/v1/labs/" + strings.TrimPrefix(p.path, "/labs/")
	for i := range 105 {
		s.must(http.StatusCreated, "POST", api+"/charges", `{"order_id":"o-`+strconv.Itoa(i)+`","amount":10}`)
	}
	doc := p.get()
	if n := doc.Find(`[data-testid="payment-row"]`).Length(); n != 100 {
		t.Errorf("%d rows, want 100", n)
	}
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid="payments-table"] caption`).Text()), " "); !strings.HasPrefix(got, "100 of 105") {
		t.Errorf("caption %q, want 100 of 105", got)
	}
	if first := strings.TrimSpace(doc.Find(`[data-testid="payment-row"] code`).First().Text()); first != "o-104" {
		t.Errorf("first row %q, want the newest, o-104", first)
	}
	if got := text(doc, "total-count") + " " + text(doc, "total-amount"); got != "105 1050" {
		t.Errorf("totals %q, want the whole ledger: 105 1050", got)
	}
}
