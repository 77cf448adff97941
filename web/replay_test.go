package web_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"idemlab/sim"
)

// charge posts a charge with the given Idempotency-Key ("" for none).
func (s *testServer) charge(prefix, body, key string) response {
	s.tb.Helper()
	if key == "" {
		return s.do("POST", prefix+"/charges", body)
	}
	return s.do("POST", prefix+"/charges", body, "Idempotency-Key", key)
}

// wantPayments fails the test unless the lab's ledger holds n payments.
func (s *testServer) wantPayments(t testing.TB, prefix string, n int64) ledger {
	t.Helper()
	l := s.ledger(prefix)
	if l.Count != n || int64(len(l.Payments)) != n {
		t.Errorf("ledger has %d payments (%d listed), want %d", l.Count, len(l.Payments), n)
	}
	return l
}

func replayLab(s *testServer, extra string) string {
	s.tb.Helper()
	settings := `{"protection":"replay"` + extra + `}`
	return s.newLab(settings)
}

// TestReplayFirstCharge: a new key charges: 201, Location, the payment.
func TestReplayFirstCharge(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := replayLab(s, "")
	before := time.Now().Add(-time.Second)
	r := s.charge(prefix, `{"order_id":"order-42","amount":1500}`, "key-a")
	if r.Status != http.StatusCreated {
		t.Fatalf("status %d, want 201\n%s", r.Status, r.Body)
	}
	if mt := r.Header.Get("Content-Type"); mt != "application/json" {
		t.Errorf("Content-Type %q, want application/json", mt)
	}
	if h := r.Header.Get("Idempotent-Replayed"); h != "" {
		t.Errorf("a first answer is marked Idempotent-Replayed: %q", h)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("body: %v\n%s", err, r.Body)
	}
	for _, f := range []string{"id", "order_id", "amount", "idempotency_key", "created_at"} {
		if _, ok := body[f]; !ok {
			t.Errorf("body has no %q: %s", f, r.Body)
		}
	}
	p := decode[sim.Payment](t, r.Body)
	if p.ID <= 0 || p.OrderID != "order-42" || p.Amount != 1500 || p.IdempotencyKey == nil || *p.IdempotencyKey != "key-a" {
		t.Errorf("payment %+v, want order-42 1500 key-a with an id", p)
	}
	if p.CreatedAt.Before(before) || p.CreatedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("created_at %v is not now", p.CreatedAt)
	}
	if _, err := time.Parse(time.RFC3339, body["created_at"].(string)); err != nil {
		t.Errorf("created_at is not RFC 3339: %v", err)
	}
	loc := r.Header.Get("Location")
	if want := prefix + "/payments/" + strconv.FormatInt(p.ID, 10); loc != want {
		t.Errorf("Location %q, want %q", loc, want)
	}
	if loc != "" {
		got := decode[sim.Payment](t, s.must(http.StatusOK, "GET", loc, "").Body)
		if got.ID != p.ID || got.OrderID != p.OrderID || got.Amount != p.Amount || !got.CreatedAt.Equal(p.CreatedAt) {
			t.Errorf("GET Location: %+v, want %+v", got, p)
		}
	}
	l := s.wantPayments(t, prefix, 1)
	if l.Total != 1500 {
		t.Errorf("total %d, want 1500", l.Total)
	}
}

// TestReplaySameKeySameBody: the same request again gets the first answer,
// byte for byte, and charges nothing.
func TestReplaySameKeySameBody(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := replayLab(s, "")
	const body = `{"order_id":"order-42","amount":1500}`
	first := s.must(http.StatusCreated, "POST", prefix+"/charges", body, "Idempotency-Key", "key-b")
	for i := range 3 {
		again := s.charge(prefix, body, "key-b")
		if again.Status != first.Status {
			t.Errorf("replay %d: status %d, want %d", i, again.Status, first.Status)
		}
		if !bytes.Equal(again.Body, first.Body) {
			t.Errorf("replay %d: body differs\nfirst: %s\nagain: %s", i, first.Body, again.Body)
		}
		if again.Header.Get("Location") == "" || again.Header.Get("Location") != first.Header.Get("Location") {
			t.Errorf("replay %d: Location %q, want %q", i, again.Header.Get("Location"), first.Header.Get("Location"))
		}
		if h := again.Header.Get("Idempotent-Replayed"); h != "true" {
			t.Errorf("replay %d: Idempotent-Replayed %q, want true", i, h)
		}
		if ct := again.Header.Get("Content-Type"); ct != first.Header.Get("Content-Type") {
			t.Errorf("replay %d: Content-Type %q, first was %q", i, ct, first.Header.Get("Content-Type"))
		}
	}
	// The same charge written another way is the same request.
	again := s.charge(prefix, "{\n  \"amount\": 1500,\n  \"order_id\": \"order-42\"\n}", "key-b")
	if again.Status != http.StatusCreated || !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the same charge, reformatted: %d %q\n%s", again.Status, again.Header.Get("Idempotent-Replayed"), again.Body)
	}
	s.wantPayments(t, prefix, 1)
}

// TestReplayInFlight: a retry while the first request still works gets 409
// with Retry-After; once the first is done, the retry gets its answer.
func TestReplayInFlight(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := replayLab(s, `,"server_delay_ms":1000,"lock_timeout_ms":5000`)
	const body = `{"order_id":"order-42","amount":1500}`

	var (
		first response
		wg    sync.WaitGroup
	)
	ts := *s
	ts.tb = &goroutineTB{TB: t} // s.do must not call t.Fatal outside the test goroutine
	wg.Go(func() { first = ts.charge(prefix, body, "key-c") })
	// The first has claimed the key and is working.
	waitFor(t, 5*time.Second, "the first request to claim key-c", func() bool {
		for _, k := range s.keysOf(prefix) {
			if k.Key == "key-c" && k.State == "in-flight" {
				return true
			}
		}
		return false
	})

	second := s.charge(prefix, body, "key-c")
	checkProblem(t, second, http.StatusConflict, pInFlight, "")
	ra := second.Header.Get("Retry-After")
	n, err := strconv.Atoi(ra)
	if err != nil || n < 1 || n > 5 {
		t.Errorf("Retry-After %q, want a whole number of seconds from 1 to 5 (the lock timeout)", ra)
	}
	if h := second.Header.Get("Idempotent-Replayed"); h != "" {
		t.Errorf("409 marked Idempotent-Replayed: %q", h)
	}
	// A different body while in flight is still a reuse of the key.
	if r := s.charge(prefix, `{"order_id":"order-42","amount":1}`, "key-c"); r.Status != http.StatusUnprocessableEntity && r.Status != http.StatusConflict {
		t.Errorf("another body while in flight: %d, want 422 or 409\n%s", r.Status, r.Body)
	}

	wg.Wait()
	if first.Status != http.StatusCreated {
		t.Fatalf("first request: %d, want 201\n%s", first.Status, first.Body)
	}
	retry := s.charge(prefix, body, "key-c")
	if retry.Status != http.StatusCreated || !bytes.Equal(retry.Body, first.Body) || retry.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("retry after the first finished: %d replayed=%q\n%s\nwant the first answer\n%s",
			retry.Status, retry.Header.Get("Idempotent-Replayed"), retry.Body, first.Body)
	}
	s.wantPayments(t, prefix, 1)
}

// goroutineTB lets a helper run in another goroutine: Fatal becomes Error.
type goroutineTB struct{ testing.TB }

func (g *goroutineTB) Fatalf(format string, args ...any) {
	g.TB.Errorf(format, args...)
	runtime.Goexit()
}

// TestReplayKeyReused: the same key with another body is refused with 422
// and changes nothing; the first request still replays afterwards.
func TestReplayKeyReused(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := replayLab(s, "")
	first := s.must(http.StatusCreated, "POST", prefix+"/charges", `{"order_id":"order-42","amount":1500}`, "Idempotency-Key", "key-d")
	before := s.ledger(prefix)
	for _, body := range []string{
		`{"order_id":"order-42","amount":3000}`,
		`{"order_id":"order-43","amount":1500}`,
	} {
		r := s.charge(prefix, body, "key-d")
		checkProblem(t, r, http.StatusUnprocessableEntity, pKeyReused, "")
		if h := r.Header.Get("Idempotent-Replayed"); h != "" {
			t.Errorf("422 marked Idempotent-Replayed: %q", h)
		}
	}
	if after := s.ledger(prefix); after.Count != before.Count || after.Total != before.Total {
		t.Errorf("ledger changed: %d/%d → %d/%d", before.Count, before.Total, after.Count, after.Total)
	}
	again := s.charge(prefix, `{"order_id":"order-42","amount":1500}`, "key-d")
	if again.Status != http.StatusCreated || !bytes.Equal(again.Body, first.Body) {
		t.Errorf("the first body after a 422: %d\n%s", again.Status, again.Body)
	}
	s.wantPayments(t, prefix, 1)
}

// TestReplayMissingKey: under replay a charge without a key is refused.
func TestReplayMissingKey(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := replayLab(s, "")
	r := s.charge(prefix, `{"order_id":"order-42","amount":1500}`, "")
	checkProblem(t, r, http.StatusBadRequest, pKeyMissing, "")
	var pages problemPages
	pages.check(t, s, pKeyMissing)
	s.wantPayments(t, prefix, 0)
	// The same charge with a key then charges once.
	s.must(http.StatusCreated, "POST", prefix+"/charges", `{"order_id":"order-42","amount":1500}`, "Idempotency-Key", "key-e")
	s.wantPayments(t, prefix, 1)
}
