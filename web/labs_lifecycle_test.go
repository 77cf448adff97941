package web_test

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"idemlab/sim/labs"
	"idemlab/web"
)

// The tests of "A lab among many" (SPEC.md): one person's lab, link or
// script never slows, breaks or exposes anyone else's.

// rowsOf counts the rows of a lab in every table of the database at path.
func rowsOf(t *testing.T, path, lab string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]int{}
	for _, table := range []string{"payments", "order_stats", "idempotency_records", "operations", "attempts", "lab_actions", "lab_lessons"} {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM `+table+` WHERE lab_id = ?`, lab).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		out[table] = n
	}
	var n int
	db.QueryRow(`SELECT COUNT(*) FROM labs WHERE id = ?`, lab).Scan(&n)
	out["labs"] = n
	return out
}

func labID(prefix string) string { return strings.TrimPrefix(prefix, "/api/v1/labs/") }

// fillLab gives a lab something in every table: operations with attempts,
// payments, a replay record, a lesson.
func fillLab(s *testServer, prefix string) {
	s.tb.Helper()
	s.must(http.StatusOK, "PATCH", prefix+"/settings", `{"protection":"replay","key_strategy":"uuid"}`)
	op := s.operation(prefix, `{"order_id":"order-1","amount":100,"fate":"response-lost"}`)
	s.retry(prefix, op.ID, "")
	s.must(http.StatusCreated, "POST", prefix+"/charges", `{"order_id":"order-2","amount":200}`, "Idempotency-Key", "k-1")
	s.must(http.StatusOK, "POST", prefix+"/lesson", `{"lesson":2}`)
}

// DELETE removes a private lab with every row of it; the shared lab cannot
// be deleted; a deleted lab is gone for everyone.
func TestDeleteLab(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lab.db")
	s := startServer(t, withDB(db))
	lab := s.newLab("")
	fillLab(s, lab)
	before := rowsOf(t, db, labID(lab))
	for table, n := range before {
		if n == 0 {
			t.Fatalf("the filled lab has no %s rows: the test proves nothing", table)
		}
	}
	s.must(http.StatusNoContent, "DELETE", lab, "")
	for table, n := range rowsOf(t, db, labID(lab)) {
		if n != 0 {
			t.Errorf("%d %s rows left after DELETE", n, table)
		}
	}
	checkProblem(t, s.do("GET", lab+"/payments", ""), http.StatusNotFound, "/problems/not-found", "")
	checkProblem(t, s.do("DELETE", lab, ""), http.StatusNotFound, "/problems/not-found", "")
	checkProblem(t, s.do("DELETE", "/api/v1/labs/demo", ""), http.StatusForbidden, "/problems/forbidden", "")
	s.must(http.StatusOK, "GET", "/api/v1/labs/demo/settings", "")
}

// A lab untouched past -lab-idle is removed with its rows and its memory;
// a lab in use stays, and so does demo.
func TestIdleLabsExpire(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lab.db")
	clock := newFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := startServer(t, withDB(db), withClock(clock),
		withLimits(labs.Config{LabIdle: time.Hour, SweepEvery: time.Hour}, web.Options{}))
	idle, busy := s.newLab(""), s.newLab("")
	fillLab(s, idle)
	fillLab(s, busy)
	inMemory := s.House.Labs.InMemory()
	ctx := context.Background()

	clock.Advance(50 * time.Minute)
	s.must(http.StatusOK, "GET", busy+"/settings", "") // used: its hour starts again
	if err := s.House.Labs.Janitor().Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(20 * time.Minute) // idle: 70 min unused; busy: 20 min
	if err := s.House.Labs.Janitor().Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for table, n := range rowsOf(t, db, labID(idle)) {
		if n != 0 {
			t.Errorf("idle lab: %d %s rows left", n, table)
		}
	}
	checkProblem(t, s.do("GET", idle+"/settings", ""), http.StatusNotFound, "/problems/not-found", "")
	if got := rowsOf(t, db, labID(busy)); got["payments"] == 0 || got["labs"] != 1 {
		t.Errorf("the lab in use lost its rows: %v", got)
	}
	if got := s.House.Labs.InMemory(); got >= inMemory {
		t.Errorf("labs in memory %d → %d: the idle lab's memory was not let go", inMemory, got)
	}
	clock.Advance(30 * 24 * time.Hour)
	if err := s.House.Labs.Janitor().Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	s.must(http.StatusOK, "GET", "/api/v1/labs/demo/settings", "")
	checkProblem(t, s.do("GET", busy+"/settings", ""), http.StatusNotFound, "/problems/not-found", "")
}

// Past -max-labs a new lab is refused with 503 and Retry-After, the limit
// named; a lab removed makes room again. (Each from an address of its own:
// one address may hold a quarter of them.)
func TestMaxLabs(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{MaxLabs: 3}, web.Options{}))
	a := s.newLab("") // demo is one of the three
	s.from(t, "127.0.0.2").newLab("")
	r := s.from(t, "127.0.0.3").do("POST", "/api/v1/labs", "")
	p := checkProblem(t, r, http.StatusServiceUnavailable, "/problems/server-busy", "")
	if r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), `"max-labs"`) {
		t.Errorf("503 without Retry-After or the limit's name: %v %s", r.Header, r.Body)
	}
	_ = p
	s.must(http.StatusNoContent, "DELETE", a, "")
	s.newLab("")
}
