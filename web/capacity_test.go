package web_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// A lab's capacity_rps is a real limiter in its charge endpoint: a
// second's worth at once, then one every 1/rps; past it a charge is
// answered 503 with Retry-After, its problem naming the limit, and
// charges nothing. Zero is no limit.
func TestCapacityLimitsTheChargeEndpoint(t *testing.T) {
	t.Parallel()
	fake := newFakeClock(time.Unix(1_800_000_000, 0))
	s := startServer(t, withClock(fake))
	prefix := s.newLab(`{"protection":"none","capacity_rps":3}`)
	charge := func(i int) response {
		return s.do("POST", prefix+"/charges", `{"order_id":"o-`+strconv.Itoa(i)+`","amount":100}`)
	}
	for i := range 3 {
		if r := charge(i); r.Status != http.StatusCreated {
			t.Fatalf("charge %d of the first second's 3: %d %s", i, r.Status, r.Body)
		}
	}
	r := charge(3)
	var p struct {
		Limit string `json:"limit"`
	}
	json.Unmarshal(r.Body, &p)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" || p.Limit != "capacity" {
		t.Errorf("the 4th: %d, Retry-After %q, limit %q; want 503, 1, capacity", r.Status, r.Header.Get("Retry-After"), p.Limit)
	}
	if got := s.ledger(prefix).Count; got != 3 {
		t.Errorf("the ledger holds %d payments, want 3: a refused charge charges nothing", got)
	}
	fake.Advance(400 * time.Millisecond) // a token comes every third of a second
	if r := charge(4); r.Status != http.StatusCreated {
		t.Errorf("0.4 s later: %d, want 201", r.Status)
	}
	s.must(http.StatusOK, "PATCH", prefix+"/settings", `{"capacity_rps":0}`)
	for i := range 10 {
		if r := charge(10 + i); r.Status != http.StatusCreated {
			t.Fatalf("capacity 0, charge %d: %d", i, r.Status)
		}
	}
}
