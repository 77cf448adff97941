package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"idemlab/sim"
)

// A lab's scenario URL, opened by a fresh client, rebuilds a lab that
// reaches the same ledger and the same attempts: settings, seed and actions
// replayed in order.
func TestScenarioRebuildsTheLedger(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.newLab(`{"protection":"unique","key_strategy":"uuid-per-request","network":"random","seed":123}`)
	op := s.operation(a, `{"order_id":"order-1","amount":100}`)
	s.retry(a, op.ID, "")
	s.must(http.StatusOK, "PATCH", a+"/settings", `{"key_strategy":"uuid","network":"response-lost"}`)
	op2 := s.operation(a, `{"order_id":"order-2","amount":200}`)
	s.retry(a, op2.ID, `{"with_key":false,"fate":"ok"}`)
	s.retry(a, op.ID, `{"fate":"duplicate"}`)
	s.must(http.StatusOK, "POST", a+"/operations/"+op2.ID+"/race", `{"parallel":3}`)

	r := s.must(http.StatusOK, "GET", a+"/scenario", "").JSON(t)
	url := r["url"].(string)
	if r["actions"].(float64) != 8 { // the lab's settings, then 7 actions
		t.Errorf("%v actions recorded, want 8", r["actions"])
	}
	fresh := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := fresh.Get(s.URL + url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/labs/") {
		t.Fatalf("scenario: %d to %q", resp.StatusCode, loc)
	}
	b := "/api/v1/labs/" + strings.TrimPrefix(loc, "/labs/")

	ignore := cmpopts.IgnoreFields(sim.Payment{}, "ID", "CreatedAt")
	if d := cmp.Diff(s.ledger(a), s.ledger(b), ignore); d != "" {
		t.Errorf("rebuilt ledger differs (-original +rebuilt):\n%s", d)
	}
	fates := func(lab string) []string {
		var out []string
		ops := decode[struct{ Operations []sim.Operation }](t, s.must(http.StatusOK, "GET", lab+"/operations?limit=100", "").Body)
		for _, op := range ops.Operations {
			for _, at := range op.Attempts {
				key := "-"
				if at.Key != nil {
					key = *at.Key
				}
				out = append(out, string(at.Fate)+" "+key)
			}
		}
		return out
	}
	if d := cmp.Diff(fates(a), fates(b)); d != "" {
		t.Errorf("rebuilt attempts differ (-original +rebuilt):\n%s", d)
	}
	// Every opener gets a lab of their own, with the same ledger: what one
	// does in theirs, the next opener never sees.
	s.must(http.StatusNoContent, "POST", b+"/reset", "")
	resp, _ = fresh.Get(s.URL + url)
	resp.Body.Close()
	loc2 := resp.Header.Get("Location")
	if loc2 == loc || !strings.HasPrefix(loc2, "/labs/") {
		t.Fatalf("the second opening went to %q, want a new lab (the first: %q)", loc2, loc)
	}
	c := "/api/v1/labs/" + strings.TrimPrefix(loc2, "/labs/")
	if d := cmp.Diff(s.ledger(a), s.ledger(c), ignore); d != "" {
		t.Errorf("the second opener's ledger differs (-original +rebuilt):\n%s", d)
	}
	// A damaged code is refused with a 400 and builds nothing.
	r2 := s.do("GET", "/s/not-a-scenario", "")
	if r2.Status != http.StatusBadRequest {
		t.Errorf("damaged code: %d %s", r2.Status, r2.Body)
	}
}

// The page offers the scenario link, and it follows the lab live.
func TestPageOffersTheScenario(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, doc := openPage(t, s, "")
	before := doc.Find(`[data-testid="scenario-link"]`).AttrOr("href", "")
	api := "/api/v1/labs/" + strings.TrimPrefix(p.path, "/labs/")
	s.operation(api, `{"order_id":"order-9","amount":90}`)
	after := p.get().Find(`[data-testid="scenario-link"]`).AttrOr("href", "")
	if !strings.HasPrefix(before, "/s/") || after == before {
		t.Errorf("scenario link %q then %q: want a /s/ link that changes with the actions", before, after)
	}
	if want := s.must(http.StatusOK, "GET", api+"/scenario", "").JSON(t)["url"]; after != want {
		t.Errorf("page link %q, API %q", after, want)
	}
}

// A played lesson is a scenario like any other: its link rebuilds the same
// ledger, because the steps went through the lab's ordinary actions. A
// storm is not an action a link takes again: the storm lesson is left out.
func TestLessonScenarioRebuildsTheLedger(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	fresh := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, ls := range s.lessons() {
		if stormy(ls) {
			continue // a storm's payments are its clients' timing: a link rebuilds its settings, not its storms
		}
		a := s.newLab("")
		s.must(http.StatusOK, "POST", a+"/lesson", fmt.Sprintf(`{"lesson":%d}`, ls.N))
		s.must(http.StatusOK, "POST", a+"/lesson/setup", "")
		for i := range ls.Steps {
			s.must(http.StatusOK, "POST", a+"/lesson/step", fmt.Sprintf(`{"at":%d}`, i))
		}
		url := s.must(http.StatusOK, "GET", a+"/scenario", "").JSON(t)["url"].(string)
		resp, err := fresh.Get(s.URL + url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		b := "/api/v1/labs/" + strings.TrimPrefix(resp.Header.Get("Location"), "/labs/")
		ignore := cmpopts.IgnoreFields(sim.Payment{}, "ID", "CreatedAt")
		if d := cmp.Diff(s.ledger(a), s.ledger(b), ignore); d != "" {
			t.Errorf("lesson %d: the rebuilt ledger differs (-played +rebuilt):\n%s", ls.N, d)
		}
	}
}

// A lab with more actions than a link carries offers no link that would
// fail: the page says why and how to start anew, the API gives no code.
func TestScenarioTooLongForALink(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	for i := range sim.MaxScenarioActions + 1 {
		s.must(http.StatusOK, "PATCH", lab+"/settings", fmt.Sprintf(`{"check_gap_ms":%d}`, i%50))
	}
	got := s.must(http.StatusOK, "GET", lab+"/scenario", "").JSON(t)
	if got["url"] != nil || got["code"] != nil || got["actions"] != float64(sim.MaxScenarioActions+1) {
		t.Errorf("scenario of %d actions: %v, want no code nor url", sim.MaxScenarioActions+1, got)
	}
	doc := getPage(t, http.DefaultClient, s.URL+"/labs/"+strings.TrimPrefix(lab, "/api/v1/labs/"), "en")
	if n := doc.Find(`[data-testid="scenario-link"]`).Length(); n != 0 {
		t.Errorf("the page offers %d scenario links that could not be opened", n)
	}
	if txt := doc.Find("#scenario").Text(); !strings.Contains(txt, "more than a scenario link carries") {
		t.Errorf("the page says %q about its scenario", txt)
	}
	s.must(http.StatusNoContent, "POST", lab+"/reset", "")
	if got := s.must(http.StatusOK, "GET", lab+"/scenario", "").JSON(t); got["url"] == nil {
		t.Errorf("after a reset the lab still has no link: %v", got)
	}
}
