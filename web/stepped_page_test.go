package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"idemlab/sim"
)

// TestSteppedPageForms steps a race through the page's plain forms (no
// JavaScript): the panel shows each racer's points, what each statement
// did in words, and buttons only for racers that stand at a point; the
// diagram draws the statements in the order they ran.
func TestSteppedPageForms(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, doc := openPage(t, s, `{"protection": "check-then-insert", "key_strategy": "uuid"}`)
	if _, hidden := doc.Find(`[data-testid="stepped"]`).Attr("hidden"); !hidden {
		t.Fatal("the stepped panel shows with no race and no lesson about one")
	}
	p.submit(p.path+"/lesson", "lesson", "3")
	if doc = p.get(); doc.Find(`#retry-form [data-testid="stepped-start"]`).Length() != 1 {
		t.Fatal("lesson 3 offers no stepped race beside the race button")
	}
	p.submit(p.path + "/stepped")
	doc = p.get()
	race, _ := doc.Find(`#stepped-state`).Attr("data-race")
	if race == "" || doc.Find(`[data-testid="racer"]`).Length() != 2 {
		t.Fatalf("after start: race %q, %d racers", race, doc.Find(`[data-testid="racer"]`).Length())
	}
	p.submit(p.path+"/stepped/step", "race", race, "racer", "A")
	doc = p.get()
	a := doc.Find(`[data-testid="racer"][data-racer="A"]`)
	if got := strings.TrimSpace(a.Find(`[data-point="select"] [data-testid="point-result"]`).Text()); got != "found no payment for this key" {
		t.Fatalf("A's SELECT says %q", got)
	}
	if next, _ := a.Find(`[aria-current]`).Attr("data-point"); next != "insert" {
		t.Fatalf("A's next point %q, want insert", next)
	}
	if doc.Find(`[data-testid="diagram-steps"] [data-mark="step"]`).Length() != 1 {
		t.Fatal("the diagram does not draw A's SELECT")
	}
	p.submit(p.path+"/stepped/step", "race", race, "racer", "B")
	p.submit(p.path+"/stepped/run", "race", race)
	doc = p.get()
	if text(doc, "stepped-over") == "" || text(doc, "total-count") != "2" {
		t.Fatalf("after run: over %q, %s payments", text(doc, "stepped-over"), text(doc, "total-count"))
	}
	api := "/api/v1" + p.path + "/stepped-races/" + race
	ran := decode[sim.SteppedRace](t, p.s.must(http.StatusOK, "GET", api, "").Body).Log
	if n := doc.Find(`[data-testid="diagram-steps"] [data-mark="step"]`).Length(); n != len(ran) || n < 4 {
		t.Fatalf("the diagram draws %d statements; the race ran %d (at least 4)", n, len(ran))
	}
	if _, hidden := doc.Find(`[data-testid="stepped"]`).Attr("hidden"); hidden || doc.Find(`[data-testid="stepped-start"]`).Length() != 1 {
		t.Fatal("after the race, lesson 3 hides it, or offers no new one")
	}
	steppedRefusals(t, p, race)
}

// steppedRefusals: a step of a race that is over changes nothing; a racer
// that is not there, or a race that is not, is refused in words.
func steppedRefusals(t *testing.T, p *page, race string) {
	t.Helper()
	resp, body := p.post(p.path+"/stepped/step", url.Values{"race": {race}, "racer": {"Z"}}, true)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `must be one of &#34;A&#34;, &#34;B&#34;`) {
		t.Fatalf("a racer Z: %d %s", resp.StatusCode, body)
	}
	resp, body = p.post(p.path+"/stepped/step", url.Values{"race": {"sr-nope"}, "racer": {"A"}}, true)
	if resp.StatusCode == http.StatusOK || !strings.Contains(body, "has no stepped race") {
		t.Fatalf("an unknown race: %d %s", resp.StatusCode, body)
	}
	p.submit(p.path+"/stepped/step", "race", race, "racer", "A")
	if got := text(p.get(), "total-count"); got != "2" {
		t.Fatalf("a step after the end: %s payments", got)
	}
}

// TestSteppedForeignToken: a charge with a racer's header that no race
// gave out is refused, and charges nothing.
func TestSteppedForeignToken(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := s.newLab(`{"protection": "unique", "key_strategy": "uuid"}`)
	r := s.do("POST", prefix+"/charges", `{"order_id": "order-42", "amount": 1500}`, "Idempotency-Key", "k1", "Idemlab-Stepped", "guess")
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "Idemlab-Stepped") || s.ledger(prefix).Count != 0 {
		t.Fatalf("a guessed racer token: %d %s, %d payments", r.Status, r.Body, s.ledger(prefix).Count)
	}
	st := s.stepped(prefix, "order-42", 2)
	s.must(http.StatusConflict, "POST", prefix+"/stepped-races", `{"racers": 2, "order_id": "order-43", "amount": 1500}`)
	s.must(http.StatusBadRequest, "POST", prefix+"/stepped-races", `{"racers": 4, "order_id": "order-43", "amount": 1500}`)
	st.step("A*", "B*")
	if got := s.ledger(prefix).Count; got != 1 {
		t.Fatalf("%d payments after the race, want 1", got)
	}
}

// TestSteppedRacesCap: on PostgreSQL a racer's open transaction holds a
// connection while a person thinks, so the races running at once hold
// half the pool at most (16 connections: 2 races); one more is 503 with
// Retry-After, and once one ends another may start.
func TestSteppedRacesCap(t *testing.T) {
	t.Parallel()
	s := startServer(t, withPostgres(t))
	var races []*stepper
	for range 2 {
		races = append(races, s.stepped(s.newLab(`{"protection": "unique", "key_strategy": "uuid"}`), "order-42", 3).step("A"))
	}
	third := s.newLab(`{"protection": "unique", "key_strategy": "uuid"}`)
	r := s.must(http.StatusServiceUnavailable, "POST", third+"/stepped-races", `{"racers": 2, "order_id": "order-42", "amount": 1500}`)
	if r.Header.Get("Retry-After") == "" || r.JSON(t)["limit"] != "stepped-races" {
		t.Fatalf("a third race: Retry-After %q, %s", r.Header.Get("Retry-After"), r.Body)
	}
	races[0].step("A*", "B*", "C*")
	s.stepped(third, "order-42", 2).step("A*", "B*")
	if got := s.ledger(third).Count; got != 1 {
		t.Fatalf("the third lab's race charged %d times, want 1", got)
	}
}

// TestSteppedScenario: a lab's scenario link rebuilds its stepped races
// step for step, so the interleaving, not only the count, comes back; a
// later operation keeps its number.
func TestSteppedScenario(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.newLab(`{"protection": "check-then-insert", "key_strategy": "uuid"}`)
	st := s.stepped(a, "order-42", 2).step("A", "B", "A*", "B*")
	s.must(http.StatusOK, "PATCH", a+"/settings", `{"protection": "unique"}`)
	s.stepped(a, "order-43", 2).step("A", "B", "A*", "B*")
	op := s.operation(a, `{"order_id": "order-44", "amount": 1500}`)
	s.retry(a, op.ID, "")
	b := s.rebuild(s.must(http.StatusOK, "GET", a+"/scenario", "").JSON(t)["url"].(string))
	got, want := s.ledger(b), s.ledger(a)
	if got.Count != want.Count || got.Count != 4 {
		t.Fatalf("rebuilt: %d payments, the original %d, want 4 (2 + 1 + 1)", got.Count, want.Count)
	}
	ops := decode[struct{ Operations []sim.Operation }](t, s.must(http.StatusOK, "GET", b+"/operations?limit=10", "").Body)
	if len(ops.Operations) != 3 || ops.Operations[0].OrderID != "order-44" || len(ops.Operations[0].Attempts) != 2 {
		t.Fatalf("rebuilt operations: %+v", ops.Operations)
	}
	if !st.race.Over || len(st.race.Log) < 4 {
		t.Fatalf("the original race: over %v after %d statements", st.race.Over, len(st.race.Log))
	}
}

// TestSteppedHoldsSettings: on PostgreSQL a change of the settings while a
// race runs is refused at once (409), not left waiting for the racers'
// locks; once the race is over it goes through.
func TestSteppedHoldsSettings(t *testing.T) {
	t.Parallel()
	s := startServer(t, withPostgres(t))
	prefix := s.newLab(`{"protection": "unique", "key_strategy": "uuid"}`)
	st := s.stepped(prefix, "order-42", 2).step("A")
	r := s.must(http.StatusConflict, "PATCH", prefix+"/settings", `{"protection": "replay"}`)
	if r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), "stepped race") {
		t.Fatalf("settings mid-race: %s", r.Body)
	}
	st.step("A*", "B*")
	s.must(http.StatusOK, "PATCH", prefix+"/settings", `{"protection": "replay"}`)
}
