package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/scenario"
)

// The tests of "A lab among many" (SPEC.md): one person's lab, link or
// script never slows, breaks or exposes anyone else's.

// A scenario link whose rebuild is refused half-way leaves no lab behind,
// and neither does one whose opener hangs up.
func TestScenarioRebuildWholeOrNothing(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	count := func() int64 { return s.House.Labs.Count() }
	n0 := count()
	yes := true
	bad := sim.Scenario{Base: sim.DefaultSettings(), Actions: []sim.Action{
		{Kind: "charge", OrderID: "order-1", Amount: 100},
		{Kind: "retry", Op: 7, WithKey: &yes}, // there is no operation 7
	}}
	r := s.do("GET", "/s/"+scenario.Encode(bad), "")
	checkProblem(t, r, http.StatusBadRequest, "/problems/validation-error", "")
	if got := count(); got != n0 {
		t.Errorf("labs %d → %d after a refused rebuild", n0, got)
	}

	slow := sim.DefaultSettings()
	slow.ServerDelayMS = 400
	var acts []sim.Action
	for i := range 10 {
		acts = append(acts, sim.Action{Kind: "charge", OrderID: fmt.Sprintf("order-%d", i), Amount: 100})
	}
	code := scenario.Encode(sim.Scenario{Base: slow, Actions: acts})
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/s/"+code, nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the slow rebuild answered %d before the opener hung up", resp.StatusCode)
	}
	// the action under way ends, then the lab goes
	poll(5*time.Second, func() bool { return count() == n0 })
	if got := count(); got != n0 {
		t.Errorf("labs %d → %d after the opener hung up", n0, got)
	}
}

// Rebuilds of different links never wait on each other: a quick link opened
// while a slow one builds is done first.
func TestSlowLinkDoesNotDelayAnother(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	slow := sim.DefaultSettings()
	slow.ServerDelayMS = 1500
	slowCode := scenario.Encode(sim.Scenario{Base: slow, Actions: []sim.Action{{Kind: "charge", OrderID: "order-1", Amount: 100}}})
	quickCode := scenario.Encode(sim.Scenario{Base: sim.DefaultSettings(), Actions: []sim.Action{{Kind: "charge", OrderID: "order-2", Amount: 100}}})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		if resp, err := noRedirect.Get(s.URL + "/s/" + slowCode); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, 5*time.Second, "the slow rebuild to be at its charge", func() bool {
		return s.House.Labs.Limits().InFlight() > 0
	})
	resp, err := noRedirect.Get(s.URL + "/s/" + quickCode)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-slowDone:
		t.Error("the quick link waited for the slow one")
	default:
	}
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("quick link: %d", resp.StatusCode)
	}
	<-slowDone
}

// Charges sent straight to /charges are part of the lab's scenario: its
// link rebuilds them too.
func TestDirectChargesAreInTheScenario(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"protection":"unique"}`)
	s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-1","amount":100}`, "Idempotency-Key", "k1")
	s.must(http.StatusOK, "POST", lab+"/charges", `{"order_id":"order-1","amount":100}`, "Idempotency-Key", "k1")
	s.operation(lab, `{"order_id":"order-2","amount":200}`)
	url := s.must(http.StatusOK, "GET", lab+"/scenario", "").JSON(t)["url"].(string)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(s.URL + url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	rebuilt := "/api/v1/labs/" + strings.TrimPrefix(resp.Header.Get("Location"), "/labs/")
	got, want := s.ledger(rebuilt), s.ledger(lab)
	if got.Count != 2 || got.Count != want.Count || got.Total != want.Total {
		t.Errorf("rebuilt %d payments, %d ₽; the lab has %d, %d ₽", got.Count, got.Total, want.Count, want.Total)
	}
}

// Orders set and removed straight through the API (PUT and DELETE, not by
// the lab's client) are part of the lab's scenario too: its link rebuilds
// the same orders. The client's own PUT is recorded once, as its operation.
func TestDirectOrdersAreInTheScenario(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	s.must(http.StatusCreated, "PUT", lab+"/orders/order-1", `{"amount":100}`)
	s.must(http.StatusCreated, "PUT", lab+"/orders/order-2", `{"amount":200}`)
	s.must(http.StatusOK, "PUT", lab+"/orders/order-1", `{"amount":150}`)
	s.must(http.StatusOK, "PUT", lab+"/orders/order-1", `{"amount":150}`) // changes nothing
	s.must(http.StatusNoContent, "DELETE", lab+"/orders/order-2", "")
	s.do("DELETE", lab+"/orders/order-2", "") // 404: nothing to remove
	s.operation(lab, `{"order_id":"order-3","amount":300,"method":"PUT"}`)
	got := s.must(http.StatusOK, "GET", lab+"/scenario", "").JSON(t)
	if got["actions"] != float64(5) { // four changes by hand, the client's PUT
		t.Errorf("%v actions recorded, want 5", got["actions"])
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(s.URL + got["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	rebuilt := "/api/v1/labs/" + strings.TrimPrefix(resp.Header.Get("Location"), "/labs/")
	orders := func(lab string) string {
		var out []string
		list, _ := s.must(http.StatusOK, "GET", lab+"/orders", "").JSON(t)["orders"].([]any)
		for _, o := range list {
			m := o.(map[string]any)
			out = append(out, fmt.Sprint(m["order_id"], "=", m["amount"]))
		}
		return strings.Join(out, " ")
	}
	if got, want := orders(rebuilt), orders(lab); got != want || want != "order-1=150 order-3=300" {
		t.Errorf("rebuilt orders %q; the lab has %q, want order-1=150 order-3=300", got, want)
	}
}
