package web_test

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"idemlab/sim"
)

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
	if la, lb := ra.Header.Get("Location"), rb.Header.Get("Location"); la == lb {
		t.Errorf("both labs answered the same payment: %s", la)
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
