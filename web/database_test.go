package web_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/waittest"
)

// A lab's page, its API and its live stream work on a database written by
// the first release (schema version 1): nothing stored is lost.
func TestMigratesTheFirstRelease(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "v1.db")
	schema, err := os.ReadFile("../testdata/schema_v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	settings, _ := json.Marshal(sim.DefaultSettings())
	for _, q := range []string{string(schema),
		`INSERT INTO labs VALUES ('demo', '` + string(settings) + `', '2026-11-29T00:00:00Z')`,
		`INSERT INTO labs VALUES ('AAAAAAAAAAAAAAAAAAAAAA', '` + string(settings) + `', '2026-11-29T00:00:00Z')`,
		`INSERT INTO payments VALUES (5, 'AAAAAAAAAAAAAAAAAAAAAA', 'order-42', 1500, NULL, NULL, '2026-11-29T00:00:01Z')`,
		`INSERT INTO payments VALUES (6, 'AAAAAAAAAAAAAAAAAAAAAA', 'order-42', 1500, NULL, NULL, '2026-11-29T00:00:02Z')`,
		`INSERT INTO payments VALUES (7, 'demo', 'order-1', 100, 'k', 'k', '2026-11-29T00:00:03Z')`,
		`INSERT INTO operations VALUES ('AAAAAAAAAAAAAAAAAAAAAA', 'op-1', 1, 'order-42', 1500, 'none', NULL, '2026-11-29T00:00:01Z')`,
		`INSERT INTO attempts (lab_id, op_id, n, fate, outcome, started_at) VALUES ('AAAAAAAAAAAAAAAAAAAAAA', 'op-1', 1, 'ok', 'pending', '2026-11-29T00:00:01Z')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	raw.Close()
	s := startServer(t, withDB(db))
	lab := "/api/v1/labs/AAAAAAAAAAAAAAAAAAAAAA"
	if l := s.ledger(lab); l.Count != 2 || l.Total != 3000 {
		t.Errorf("migrated lab: %d payments, %d ₽; want 2, 3000", l.Count, l.Total)
	}
	s.must(http.StatusOK, "GET", lab+"/payments/6", "") // numbers kept: stored answers name them
	page := s.must(http.StatusOK, "GET", "/labs/AAAAAAAAAAAAAAAAAAAAAA", "", "Accept-Language", "en")
	if !strings.Contains(string(page.Body), `data-testid="double-charge-alert"`) {
		t.Error("the migrated lab's double charge is not on its page")
	}
	op := decode[sim.Operation](t, s.must(http.StatusOK, "GET", lab+"/operations/op-1", "").Body)
	if a := op.Attempts[0]; a.Outcome != sim.OutcomeUnknown || a.FinishedAt == nil {
		t.Errorf("an attempt pending at the crash: %s, finished %v; want unknown, finished", a.Outcome, a.FinishedAt)
	}
	if l := s.ledger("/api/v1/labs/demo"); l.Count != 1 {
		t.Errorf("demo: %d payments, want 1", l.Count)
	}
	// The migrated lab works on: a new payment takes the next number.
	r := s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-43","amount":100}`)
	if id := r.JSON(t)["id"]; id != float64(7) {
		t.Errorf("the next payment after 5 and 6 is %v, want 7", id)
	}
}

// A database of version 3 (the queue's release) gains the clock and the
// lost charges of version 4, its labs and payments kept; a lab of it runs
// lesson 12's lost charge at once.
func TestMigratesVersion3(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "v3.db")
	schema, err := os.ReadFile("../testdata/schema_v3.sql")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	settings, _ := json.Marshal(sim.DefaultSettings())
	for _, q := range []string{string(schema), `PRAGMA user_version = 3`,
		`INSERT INTO labs (id, settings, created_at) VALUES ('AAAAAAAAAAAAAAAAAAAAAA', '` + string(settings) + `', '2026-11-30T00:00:00Z')`,
		`INSERT INTO lab_counts (lab_id) VALUES ('AAAAAAAAAAAAAAAAAAAAAA')`,
		`INSERT INTO payments (lab_id, n, order_id, amount, created_at) VALUES ('AAAAAAAAAAAAAAAAAAAAAA', 1, 'order-42', 1500, '2026-11-30T00:00:01Z')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	raw.Close()
	s := startServer(t, withDB(db), withParts())
	lab := "/api/v1/labs/AAAAAAAAAAAAAAAAAAAAAA"
	if l := s.ledger(lab); l.Count != 1 || l.Total != 1500 {
		t.Errorf("migrated lab: %d payments, %d ₽; want 1, 1500", l.Count, l.Total)
	}
	s.must(http.StatusOK, "PATCH", lab+"/settings", `{"protection":"set-nx","key_strategy":"uuid","server_fault":"crash-after-guard"}`)
	op := s.operation(lab, `{"order_id":"order-43","amount":1500,"fate":"ok"}`)
	s.must(http.StatusOK, "PATCH", lab+"/settings", `{"server_fault":"none"}`)
	s.retry(lab, op.ID, `{"fate":"ok"}`)
	s.must(http.StatusOK, "POST", lab+"/clock", `{"advance_s":60}`)
	page := s.must(http.StatusOK, "GET", "/labs/AAAAAAAAAAAAAAAAAAAAAA", "", "Accept-Language", "en")
	if !strings.Contains(string(page.Body), `data-testid="lost-charge-alert"`) || !strings.Contains(string(page.Body), "+1 min") {
		t.Error("the migrated lab does not show its lost charge and its clock")
	}
}

// A restart ends every request of the lab's own API that was in flight:
// their keys are free at once (they stayed locked ten minutes), and the
// attempts they left pending are finished as unknown.
func TestRestartFreesTheAPIsKeys(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lab.db")
	s := startServer(t, withDB(db))
	lab := s.newLab("")
	s.Stop()
	raw, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	far := time.Now().Add(time.Hour).UnixMilli()
	_, err = raw.Exec(`INSERT INTO idempotency_records (lab_id, scope, key, fingerprint, state, token, locked_until, expires_at, created_at)
VALUES (?, 'api /api/v1/labs/:lab/operations', 'op-key', 'x', 'in-flight', 't', ?, ?, '2026-12-01T00:00:00Z')`, labID(lab), far, far)
	raw.Close()
	if err != nil {
		t.Fatal(err)
	}
	s = startServer(t, withDB(db))
	s.must(http.StatusCreated, "POST", lab+"/operations", `{"order_id":"order-1","amount":100}`, "Idempotency-Key", "op-key")
}

// Charges that only hit /charges under none and unique still let the
// write-ahead log be copied into the database file (it once grew to
// 41.7 MB over 3,000 such charges, every frame unapplied, a read holding
// it): soon after they end, the database file alone, without its log,
// holds every payment, and the log stays within its bound.
func TestWALIsCheckpointed(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lab.db")
	s := startServer(t, withDB(db))
	lab := s.newLab(`{"protection":"unique"}`)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 250 {
				s.do("POST", lab+"/charges", fmt.Sprintf(`{"order_id":"order-%d","amount":100}`, i), "Idempotency-Key", fmt.Sprintf("k-%d-%d", w, i))
			}
		})
	}
	wg.Wait()
	if l := s.ledger(lab); l.Count != 1000 {
		t.Fatalf("%d payments, want 1000", l.Count)
	}
	alone := filepath.Join(t.TempDir(), "alone.db")
	waittest.For(t, "the database file alone to hold the 1,000 payments", func() bool {
		return paymentsInFileAlone(t, db, alone, labID(lab)) == 1000
	})
	fi, err := os.Stat(db + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 36<<20 {
		t.Errorf("the WAL is %d bytes after 1,000 charges: past its bound", fi.Size())
	}
}

// paymentsInFileAlone counts lab's payments in a copy (at cp) of the
// database file without its log: -1 while the copy is not a whole database.
func paymentsInFileAlone(t *testing.T, db, cp, lab string) int {
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+cp+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	n := -1
	if raw.QueryRow(`SELECT count(*) FROM payments WHERE lab_id = ?`, lab).Scan(&n) != nil {
		return -1
	}
	return n
}
