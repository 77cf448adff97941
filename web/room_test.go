package web_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/lesson"
	"idemlab/sim/scenario"
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
// named; a lab removed makes room again.
func TestMaxLabs(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{MaxLabs: 3}, web.Options{}))
	a := s.newLab("") // demo is one of the three
	s.newLab("")
	r := s.do("POST", "/api/v1/labs", "")
	p := checkProblem(t, r, http.StatusServiceUnavailable, "/problems/server-busy", "")
	if r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), `"max-labs"`) {
		t.Errorf("503 without Retry-After or the limit's name: %v %s", r.Header, r.Body)
	}
	_ = p
	s.must(http.StatusNoContent, "DELETE", a, "")
	s.newLab("")
}

// Simulated requests in flight are capped across the server: a race that
// would pass the cap is refused with 503 before anything of it is written.
func TestInFlightCap(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{MaxInFlight: 4}, web.Options{}))
	lab := s.newLab(`{"protection":"unique","key_strategy":"uuid"}`)
	s.operation(lab, `{"order_id":"order-1","amount":100,"fate":"request-lost"}`)
	before := s.must(http.StatusOK, "GET", lab+"/scenario", "").JSON(t)["actions"]
	r := s.do("POST", lab+"/operations/latest/race", `{"parallel":8}`)
	checkProblem(t, r, http.StatusServiceUnavailable, "/problems/server-busy", "")
	if r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), `"max-inflight"`) {
		t.Errorf("503 without Retry-After or the limit's name: %v %s", r.Header, r.Body)
	}
	if after := s.must(http.StatusOK, "GET", lab+"/scenario", "").JSON(t)["actions"]; after != before {
		t.Errorf("the refused race was recorded: actions %v → %v", before, after)
	}
	s.must(http.StatusOK, "POST", lab+"/operations/latest/race", `{"parallel":4}`)
	if n := s.House.Labs.Limits().InFlight(); n != 0 {
		t.Errorf("%d slots still taken after the race ended", n)
	}
}

// Two hundred races at once with a slow server: the cap answers the excess
// with 503 and the rest run; no other 5xx, and every slot comes back.
func TestRaceStormIsCapped(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{MaxInFlight: 128}, web.Options{}))
	var labs []string
	for range 8 {
		lab := s.newLab(`{"protection":"unique","key_strategy":"uuid","server_delay_ms":300}`)
		s.operation(lab, `{"order_id":"order-1","amount":100,"fate":"request-lost"}`)
		labs = append(labs, lab)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		status = map[int]int{}
	)
	for i := range 200 {
		wg.Go(func() {
			r := s.do("POST", labs[i%len(labs)]+"/operations/latest/race", `{"parallel":64}`)
			mu.Lock()
			status[r.Status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	for code, n := range status {
		if code != http.StatusOK && code != http.StatusServiceUnavailable {
			t.Errorf("%d answers %d", n, code)
		}
	}
	if status[http.StatusOK] == 0 || status[http.StatusServiceUnavailable] == 0 {
		t.Errorf("answers %v: want some races run and some refused", status)
	}
	for _, lab := range labs {
		if l := s.ledger(lab); l.Count > 1 {
			t.Errorf("%s: %d payments under unique, want at most 1", lab, l.Count)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.House.Labs.Limits().InFlight() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the last answers are on their way
	}
	if n := s.House.Labs.Limits().InFlight(); n != 0 {
		t.Errorf("%d slots still taken", n)
	}
}

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
	deadline := time.Now().Add(5 * time.Second)
	for count() != n0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // the action under way ends, then the lab goes
	}
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
	time.Sleep(200 * time.Millisecond) // the slow rebuild is at its charge
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

// Past -max-streams a new live stream is refused with 503 and Retry-After;
// closing one makes room.
func TestMaxStreams(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{}, web.Options{MaxStreams: 2}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func() *http.Response {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/labs/demo/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	a, b := open(), open()
	defer b.Body.Close()
	c := open()
	c.Body.Close()
	if c.StatusCode != http.StatusServiceUnavailable || c.Header.Get("Retry-After") == "" {
		t.Errorf("a third stream: %d (Retry-After %q), want 503 with Retry-After", c.StatusCode, c.Header.Get("Retry-After"))
	}
	a.Body.Close()
	deadline := time.Now().Add(3 * time.Second)
	for {
		d := open()
		d.Body.Close()
		if d.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream did not make room: %d", d.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// /healthz says 503 when the ledger cannot be written.
func TestHealthTellsTheTruth(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.must(http.StatusOK, "GET", "/healthz", "")
	s.Store.Close() // nothing can be written now
	r := s.do("GET", "/healthz", "")
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("healthz with a closed ledger: %d %s", r.Status, r.Body)
	}
}

// Payments are numbered in their lab, from 1: a fresh lab's first payment
// is #1 whatever other labs did.
func TestPaymentNumbersAreTheLabs(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for range 3 {
		s.must(http.StatusCreated, "POST", "/api/v1/labs/demo/charges", `{"order_id":"order-1","amount":100}`)
	}
	lab := s.newLab("")
	r := s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-1","amount":100}`)
	if id := r.JSON(t)["id"]; id != float64(1) {
		t.Errorf("a fresh lab's first payment is %v, want 1", id)
	}
	if loc := r.Header.Get("Location"); loc != lab+"/payments/1" {
		t.Errorf("Location %q", loc)
	}
	s.must(http.StatusOK, "GET", lab+"/payments/1", "")
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

// Charges that only hit /charges under none and unique still let SQLite
// checkpoint its write-ahead log: it stays small beside the database (it
// grew to 41.7 MB over 3,000 such charges, every frame unapplied: 14 MB
// over the 1,000 here).
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
	fi, err := os.Stat(db + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 8<<20 {
		t.Errorf("the WAL is %d bytes after 1,000 charges: not checkpointed", fi.Size())
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

// The report taken home names the charges sent straight to the API too.
func TestReportNamesDirectCharges(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-77","amount":700}`, "Idempotency-Key", "curl-key")
	s.operation(lab, `{"order_id":"order-1","amount":100}`)
	page := "/labs/" + labID(lab)
	for lang, want := range map[string]string{"en": "Charges sent straight to the API (not by the lab's client): 1.", "ru": "Списания, отправленные прямо в API (не клиентом лаборатории): 1."} {
		r := s.must(http.StatusOK, "GET", page+"/export/report.md?lang="+lang, "")
		if !strings.Contains(string(r.Body), want) || !strings.Contains(string(r.Body), "order-77") || !strings.Contains(string(r.Body), "curl-key") {
			t.Errorf("%s report does not name the direct charge:\n%s", lang, r.Body)
		}
		if strings.Count(string(r.Body), "order-1`") > 0 && strings.Contains(string(r.Body), "payment 2") {
			t.Errorf("%s report lists the client's charge as a direct one:\n%s", lang, r.Body)
		}
	}
}

// The counts kept by triggers (payments, total, orders charged more than
// once, orders charged more often than bought) always equal what counting
// the ledger says, through charges, purchases and resets in any order.
func TestKeptCountsEqualTheLedger(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lab.db")
	s := startServer(t, withDB(db))
	lab := s.newLab(`{"protection":"none"}`)
	raw, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	check := func(step int) {
		t.Helper()
		var want sim.Totals
		q := `SELECT COUNT(*), COALESCE(SUM(amount), 0) FROM payments WHERE lab_id = ?`
		if err := raw.QueryRow(q, labID(lab)).Scan(&want.Payments, &want.Total); err != nil {
			t.Fatal(err)
		}
		q = `SELECT COUNT(*), COALESCE(SUM(c > (SELECT COUNT(*) FROM operations o WHERE o.lab_id = ?1 AND o.order_id = p.order_id)), 0)
FROM (SELECT order_id, COUNT(*) AS c FROM payments WHERE lab_id = ?1 GROUP BY order_id HAVING COUNT(*) > 1) p`
		if err := raw.QueryRow(q, labID(lab)).Scan(&want.Doubled, &want.Overcharged); err != nil {
			t.Fatal(err)
		}
		l, err := s.House.Labs.Lab(context.Background(), labID(lab))
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.House.Ledger.Totals(context.Background(), l)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("after step %d: kept %+v, counted %+v", step, got, want)
		}
	}
	for step := range 120 {
		order := fmt.Sprintf("order-%d", step*7%5)
		switch step % 6 {
		case 0, 1:
			s.must(http.StatusCreated, "POST", lab+"/charges", fmt.Sprintf(`{"order_id":%q,"amount":%d}`, order, 100+step))
		case 2, 3:
			s.operation(lab, fmt.Sprintf(`{"order_id":%q,"amount":100,"fate":"response-lost"}`, order))
		case 4:
			s.retry(lab, "latest", "")
		case 5:
			if step%30 == 5 {
				s.must(http.StatusNoContent, "POST", lab+"/reset", "")
			} else {
				s.operation(lab, fmt.Sprintf(`{"order_id":%q,"amount":100,"fate":"request-lost"}`, order))
			}
		}
		check(step)
	}
}

// The double-charge alert names at most ten orders and says how many more:
// a lab with thousands of doubly charged orders has a page of the same size.
func TestAlertIsBounded(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	for i := range 13 {
		for range 2 {
			s.must(http.StatusCreated, "POST", lab+"/charges", fmt.Sprintf(`{"order_id":"order-%d","amount":1500}`, i))
		}
	}
	for lang, more := range map[string]string{"en": "…and 3 more orders charged more than once.", "ru": "…и ещё 3 заказа с повторным списанием."} {
		doc := getPage(t, http.DefaultClient, s.URL+"/labs/"+labID(lab), lang)
		alert := doc.Find(`[data-testid="double-charge-alert"]`)
		if n := alert.Find("li").Length(); n != 10 {
			t.Errorf("%s: the alert names %d orders, want 10", lang, n)
		}
		if !strings.Contains(alert.Text(), more) {
			t.Errorf("%s: the alert does not say %q: %s", lang, more, alert.Text())
		}
	}
}

// A lab with no lesson open is "idle", one of the four states README lists.
func TestLessonStateOfNoLesson(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	if st := s.must(http.StatusOK, "GET", lab+"/lesson", "").JSON(t)["state"]; st != lesson.Idle {
		t.Errorf("state %q with no lesson open, want %q", st, lesson.Idle)
	}
}

// A setting refused on a Russian page is explained in Russian, and a bad
// request's error page too: the words of sim's errors live in views, keyed
// by code («…не принята: must be an integer from 1 to 10» was seen).
func TestRefusalsSpeakThePagesLanguage(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	form := url.Values{"protection": {"none"}, "key_strategy": {"none"}, "network": {"ok"},
		"max_attempts": {"11"}, "base_ms": {"200"}, "cap_ms": {"2000"}, "jitter": {"full"},
		"client_timeout_ms": {"1000"}, "server_delay_ms": {"0"}, "check_gap_ms": {"100"}}
	for lang, want := range map[string]string{
		"ru": "Настройка retry.max_attempts не принята: должно быть целым числом от 1 до 10.",
		"en": "The setting retry.max_attempts was refused: must be an integer from 1 to 10.",
	} {
		resp, body := p.post(p.path+"/settings?lang="+lang, form, true)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, want) {
			t.Errorf("%s: %d, the notice does not say %q:\n%s", lang, resp.StatusCode, want, body)
		}
	}
	r := s.do("POST", "/api/v1/labs/demo/charges", `{"order_id":"","amount":0}`, "Accept", "text/html", "Accept-Language", "ru")
	for _, want := range []string{"должно быть длиной от 1 до 64 символов", "должно быть целым числом от 1 до 1000000000"} {
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), want) {
			t.Errorf("the Russian error page does not say %q:\n%s", want, r.Body)
		}
	}
}

// A page's htmx request refused at a server-wide limit gets a notice in the
// page's language, with 503 and Retry-After: htmx swaps error answers, so a
// problem's JSON would land in the page.
func TestBusyNoticeForThePage(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{MaxInFlight: 1}, web.Options{}))
	p, _ := openPage(t, s, `{"network":"duplicate"}`)
	resp, body := p.post(p.path+"/charge?lang=ru", url.Values{"order_id": {"order-1"}, "amount": {"100"}}, true)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if !strings.Contains(body, `id="charge-notice"`) || !strings.Contains(body, "имитируемых запросов в пути") || strings.Contains(body, `"type"`) {
		t.Errorf("the page got no Russian notice:\n%s", body)
	}
}

// The labs a comparison makes idle out like any other: comparing no
// longer adds labs for good.
func TestCompareLabsIdleOut(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := startServer(t, withClock(clock), withLimits(labs.Config{LabIdle: time.Hour, SweepEvery: time.Hour}, web.Options{}))
	n0 := s.House.Labs.Count()
	s.must(http.StatusOK, "POST", "/api/v1/compare", "")
	if want := int64(len(sim.Protections) * len(sim.KeyStrategies)); s.House.Labs.Count() != n0+want {
		t.Fatalf("labs %d → %d after a comparison, want %d more", n0, s.House.Labs.Count(), want)
	}
	clock.Advance(2 * time.Hour)
	if err := s.House.Labs.Janitor().Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.House.Labs.Count(); got != n0 {
		t.Errorf("labs %d → %d after the comparison's labs idled out, want %d", n0, got, n0)
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
