package web_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"path/filepath"
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
	time.Sleep(250 * time.Millisecond) // the first has claimed the key and is working

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

// TestReplayQuotedKey: the RFC 8941 quoted form "abc" is the key abc.
func TestReplayQuotedKey(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := replayLab(s, "")
	const body = `{"order_id":"order-42","amount":1500}`
	for _, tc := range []struct{ first, second, stored string }{
		{`abc`, `"abc"`, `abc`},
		{`"xyz"`, `xyz`, `xyz`},
		{`"a\"b\\c"`, `a"b\c`, `a"b\c`},
	} {
		r1 := s.charge(prefix, body, tc.first)
		if r1.Status != http.StatusCreated {
			t.Fatalf("key %s: %d\n%s", tc.first, r1.Status, r1.Body)
		}
		if p := decode[sim.Payment](t, r1.Body); p.IdempotencyKey == nil || *p.IdempotencyKey != tc.stored {
			t.Errorf("key %s stored as %v, want %q", tc.first, p.IdempotencyKey, tc.stored)
		}
		r2 := s.charge(prefix, body, tc.second)
		if r2.Status != http.StatusCreated || r2.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r1.Body, r2.Body) {
			t.Errorf("key %s after %s: %d replayed=%q\n%s", tc.second, tc.first, r2.Status, r2.Header.Get("Idempotent-Replayed"), r2.Body)
		}
	}
	s.wantPayments(t, prefix, 3)
}

// TestReplayKeysPerLab: the same key in two labs is two keys.
func TestReplayKeysPerLab(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a, b := replayLab(s, ""), replayLab(s, "")
	const body = `{"order_id":"order-42","amount":1500}`
	ra := s.charge(a, body, "shared-key")
	rb := s.charge(b, body, "shared-key")
	for name, r := range map[string]response{"lab a": ra, "lab b": rb} {
		if r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("%s: %d replayed=%q, want a new charge\n%s", name, r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
		}
	}
	if bytes.Equal(ra.Body, rb.Body) {
		t.Errorf("both labs answered the same payment: %s", ra.Body)
	}
	// Another body under the key in lab b is a reuse there, not in lab a.
	if r := s.charge(b, `{"order_id":"order-43","amount":1}`, "shared-key"); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("lab b, other body: %d, want 422", r.Status)
	}
	s.wantPayments(t, a, 1)
	s.wantPayments(t, b, 1)
	if r := s.charge(a, body, "shared-key"); r.Status != http.StatusCreated || !bytes.Equal(r.Body, ra.Body) {
		t.Errorf("lab a replay: %d\n%s", r.Status, r.Body)
	}
}

// TestReplayKeyExpiry: after key_ttl_s the key is forgotten and charges again.
func TestReplayKeyExpiry(t *testing.T) {
	t.Parallel()
	clk := newFakeClock(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	s := startServer(t, withClock(clk))
	prefix := replayLab(s, `,"key_ttl_s":1`)
	const body = `{"order_id":"order-42","amount":1500}`
	first := s.must(http.StatusCreated, "POST", prefix+"/charges", body, "Idempotency-Key", "key-h")

	clk.Advance(900 * time.Millisecond)
	if r := s.charge(prefix, body, "key-h"); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.Body, first.Body) {
		t.Errorf("0.9 s later (ttl 1 s): %d replayed=%q, want the replay\n%s", r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
	}
	s.wantPayments(t, prefix, 1)

	clk.Advance(200 * time.Millisecond)
	second := s.charge(prefix, body, "key-h")
	if second.Status != http.StatusCreated || second.Header.Get("Idempotent-Replayed") != "" || bytes.Equal(second.Body, first.Body) {
		t.Errorf("1.1 s later (ttl 1 s): %d replayed=%q, want a new charge\n%s", second.Status, second.Header.Get("Idempotent-Replayed"), second.Body)
	}
	s.wantPayments(t, prefix, 2)
	// The new record replays in its turn, and an expired key may take another body.
	if r := s.charge(prefix, body, "key-h"); r.Status != http.StatusCreated || !bytes.Equal(r.Body, second.Body) {
		t.Errorf("right after the new charge: %d\n%s", r.Status, r.Body)
	}
	clk.Advance(2 * time.Second)
	if r := s.charge(prefix, `{"order_id":"order-43","amount":1}`, "key-h"); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("an expired key with another body: %d\n%s", r.Status, r.Body)
	}
	s.wantPayments(t, prefix, 3)
}

// TestAPIIdempotent: the lab's own POST endpoints honour Idempotency-Key.
func TestAPIIdempotent(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lab.db")
	s := startServer(t, withDB(db))
	ro, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	labCount := func() int {
		t.Helper()
		var n int
		if err := ro.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM labs`).Scan(&n); err != nil {
			t.Fatalf("count labs: %v", err)
		}
		return n
	}

	// Creating a lab is not replayed: two callers who happen to send one
	// key (a common "test", say) must each get a lab of their own, never the
	// other's private one (SPEC, "Private means private").
	t.Run("create lab", func(t *testing.T) {
		n0 := labCount()
		first := s.must(http.StatusCreated, "POST", "/api/v1/labs", "", "Idempotency-Key", "test")
		second := s.must(http.StatusCreated, "POST", "/api/v1/labs", "", "Idempotency-Key", "test")
		if bytes.Equal(first.Body, second.Body) || first.Header.Get("Location") == second.Header.Get("Location") {
			t.Errorf("two creates with one key got the same lab: %s", second.Body)
		}
		for _, r := range []response{first, second} {
			if h := r.Header.Get("Idempotent-Replayed"); h != "" {
				t.Errorf("a create answered as replayed (%q): %s", h, r.Body)
			}
		}
		if labCount() != n0+2 {
			t.Errorf("labs %d → %d, want two new labs", n0, labCount())
		}
	})

	t.Run("start operation", func(t *testing.T) {
		prefix := s.newLab("")
		const body = `{"order_id":"order-42","amount":1500}`
		opCount := func() int {
			t.Helper()
			r := s.must(http.StatusOK, "GET", prefix+"/operations", "")
			return len(decode[struct {
				Operations []sim.Operation `json:"operations"`
			}](t, r.Body).Operations)
		}
		first := s.must(http.StatusCreated, "POST", prefix+"/operations", body, "Idempotency-Key", "op-key-1")
		again := s.do("POST", prefix+"/operations", body, "Idempotency-Key", "op-key-1")
		if again.Status != http.StatusCreated || !bytes.Equal(again.Body, first.Body) {
			t.Errorf("second start: %d\n%s\nwant\n%s", again.Status, again.Body, first.Body)
		}
		if h := again.Header.Get("Idempotent-Replayed"); h != "true" {
			t.Errorf("second start: Idempotent-Replayed %q, want true", h)
		}
		if again.Header.Get("Location") != first.Header.Get("Location") || first.Header.Get("Location") == "" {
			t.Errorf("Location %q, first %q", again.Header.Get("Location"), first.Header.Get("Location"))
		}
		if n := opCount(); n != 1 {
			t.Errorf("%d operations, want 1", n)
		}
		s.wantPayments(t, prefix, 1)
		other := s.do("POST", prefix+"/operations", `{"order_id":"order-42","amount":3000}`, "Idempotency-Key", "op-key-1")
		checkProblem(t, other, http.StatusUnprocessableEntity, pKeyReused, "")
		if n := opCount(); n != 1 {
			t.Errorf("%d operations after a 422, want 1", n)
		}
		s.wantPayments(t, prefix, 1)

		// Retry too: the same key makes one attempt, not two.
		op := decode[sim.Operation](t, first.Body)
		r1 := s.must(http.StatusOK, "POST", prefix+"/operations/"+op.ID+"/retry", `{"with_key":false}`, "Idempotency-Key", "retry-key-1")
		r2 := s.do("POST", prefix+"/operations/"+op.ID+"/retry", `{"with_key":false}`, "Idempotency-Key", "retry-key-1")
		if r2.Status != http.StatusOK || !bytes.Equal(r1.Body, r2.Body) || r2.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("second retry: %d replayed=%q", r2.Status, r2.Header.Get("Idempotent-Replayed"))
		}
		got := decode[sim.Operation](t, s.must(http.StatusOK, "GET", prefix+"/operations/"+op.ID, "").Body)
		if len(got.Attempts) != 2 {
			t.Errorf("%d attempts, want 2 (the first and one retry)", len(got.Attempts))
		}
		s.wantPayments(t, prefix, 2)
	})
}

// TestDuplicateNotReplayed: under unique and on-conflict a repeated key gets
// 200 {"status":"duplicate"}, not the first answer, and no new charge.
func TestDuplicateNotReplayed(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, prot := range []string{"unique", "on-conflict"} {
		t.Run(prot, func(t *testing.T) {
			prefix := s.newLab(`{"protection":"` + prot + `"}`)
			const body = `{"order_id":"order-42","amount":1500}`
			first := s.charge(prefix, body, "dup-key")
			if first.Status != http.StatusCreated {
				t.Fatalf("first: %d\n%s", first.Status, first.Body)
			}
			for _, k := range []string{"dup-key", `"dup-key"`} {
				r := s.charge(prefix, body, k)
				if r.Status != http.StatusOK {
					t.Errorf("key %s again: status %d, want 200\n%s", k, r.Status, r.Body)
				}
				if got := r.JSON(t)["status"]; got != "duplicate" {
					t.Errorf("key %s again: status field %v, want duplicate\n%s", k, got, r.Body)
				}
				if h, ok := r.Header["Idempotent-Replayed"]; ok {
					t.Errorf("key %s again: Idempotent-Replayed %q", k, h)
				}
				if bytes.Equal(r.Body, first.Body) {
					t.Errorf("key %s again: the first answer was replayed", k)
				}
			}
			l := s.wantPayments(t, prefix, 1)
			if l.Total != 1500 {
				t.Errorf("total %d, want 1500", l.Total)
			}
		})
	}
}
