package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The lab's clock stops at its limit instead of wrapping round: the
// 293 yearly moves that once took it back to 1735 are refused past 100
// years, naming what is still possible, and an expired replay key stays
// expired (its time left never wraps to millennia).
func TestClockCannotOverflow(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"protection":"replay","key_ttl_s":60}`)
	s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-42","amount":1500}`, "Idempotency-Key", "k-1")
	const year = 365 * 24 * 60 * 60
	start := time.Now()
	var last time.Time
	refused := 0
	for i := range 293 {
		r := s.do("POST", lab+"/clock", fmt.Sprintf(`{"advance_s":%d}`, year))
		switch {
		case r.Status == http.StatusOK:
			at, err := time.Parse(time.RFC3339, r.JSON(t)["now"].(string))
			if err != nil || at.Before(last) {
				t.Fatalf("move %d: the clock says %s after %s", i+1, r.JSON(t)["now"], last)
			}
			last = at
		case r.Status == http.StatusBadRequest:
			refused++
			if refused == 1 && !strings.Contains(string(r.Body), "advance_s") {
				t.Errorf("move %d refused without naming advance_s: %s", i+1, r.Body)
			}
		default:
			t.Fatalf("move %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	if years := last.Sub(start).Hours() / 24 / 365; years < 99 || years > 101 {
		t.Errorf("the clock went %.1f years ahead; want it to stop at 100", years)
	}
	if refused != 193 {
		t.Errorf("%d moves refused; want the 193 past 100 years", refused)
	}
	for _, k := range s.keysOf(lab) {
		if k.State != "expired" || k.TTLMS == nil || *k.TTLMS != 0 {
			t.Errorf("key %s: %s, ttl %v; want expired, 0", k.Key, k.State, k.TTLMS)
		}
	}
	r := s.charge(lab, `{"order_id":"order-42","amount":1500}`, "k-1")
	if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("the expired key again: %d (replayed %q); want a new charge", r.Status, r.Header.Get("Idempotent-Replayed"))
	}
}

// The move that would pass the limit is refused with the range still
// possible, and nothing changes; a move within it is taken.
func TestClockRefusesPastItsLimitByName(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	const year = 365 * 24 * 60 * 60
	for range 99 {
		s.must(http.StatusOK, "POST", lab+"/clock", fmt.Sprintf(`{"advance_s":%d}`, year))
	}
	s.must(http.StatusOK, "POST", lab+"/clock", fmt.Sprintf(`{"advance_s":%d}`, year-10))
	r := s.must(http.StatusBadRequest, "POST", lab+"/clock", `{"advance_s":11}`)
	if !strings.Contains(string(r.Body), "from 1 to 10") {
		t.Errorf("a move of 11 s with 10 s left: %s; want the range 1 to 10 named", r.Body)
	}
	s.must(http.StatusOK, "POST", lab+"/clock", `{"advance_s":10}`)
	r = s.must(http.StatusBadRequest, "POST", lab+"/clock", `{"advance_s":1}`)
	if !strings.Contains(string(r.Body), "100 years") {
		t.Errorf("a move at the limit: %s; want the limit named", r.Body)
	}
}
