package web_test

import (
	"net/http"
	"testing"
)

// Lesson 10 through the API: under set-nx, with the client's UUID reused by
// the retry, the lost answer's retry is a duplicate, as under unique.
func TestSetNXLesson10(t *testing.T) {
	t.Parallel()
	for range trials {
		setNXOnce(t, startServer(t, withParts()))
	}
}

// The same against a real redis-server ($IDEMLAB_TEST_REDIS; CI starts one).
func TestSetNXRealRedis(t *testing.T) {
	t.Parallel()
	setNXOnce(t, startServer(t, withRealRedis(t)))
}

func setNXOnce(t *testing.T, s *testServer) {
	t.Helper()
	lab := s.newLab(`{"protection":"set-nx","key_strategy":"uuid","network":"response-lost"}`)
	op := s.operation(lab, `{"order_id":"order-42","amount":1500}`)
	op = s.retry(lab, op.ID, `{"fate":"ok"}`)
	if got := op.Attempts[len(op.Attempts)-1]; got.Status != http.StatusOK || got.Outcome != "duplicate" {
		t.Errorf("the retry: %d %s; want 200 duplicate", got.Status, got.Outcome)
	}
	if led := s.ledger(lab); led.Count != 1 || led.Total != 1500 {
		t.Errorf("%d charges, %d ₽; want 1, 1500", led.Count, led.Total)
	}
	// A reset forgets the lab's keys: the same key charges again.
	s.must(http.StatusNoContent, "POST", lab+"/reset", "")
	op = s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"ok"}`)
	if led := s.ledger(lab); led.Count != 1 {
		t.Errorf("after a reset: %d charges, want 1", led.Count)
	}
}

// Without its store, set-nx refuses with 503 naming the store, charging
// nothing; the other protections are not touched.
func TestSetNXWithoutItsStore(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"protection":"set-nx"}`)
	r := s.do("POST", lab+"/charges", `{"order_id":"order-42","amount":1500}`, "Idempotency-Key", "k-1")
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Errorf("set-nx without its store: %d (Retry-After %q), want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"))
	}
	if got := r.JSON(t)["limit"]; got != "kv" {
		t.Errorf("the problem names %v, want the store (kv)", got)
	}
	if led := s.ledger(lab); led.Count != 0 {
		t.Errorf("%d charges, want none", led.Count)
	}
}
