package web_test

import (
	"bytes"
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"testing"

	"idemlab/sim"
)

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

	t.Run("start operation", func(t *testing.T) { startOperationIsIdempotent(t, s) })
}

// startOperationIsIdempotent: starting an operation, and retrying it, with a
// key already used answers the first answer again and does nothing more.
func startOperationIsIdempotent(t *testing.T, s *testServer) {
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
}
