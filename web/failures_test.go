package web_test

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"idemlab/sim"
	"idemlab/sim/keys/keystest"
)

const order42 = `{"order_id":"order-42","amount":1500}`

// Redis stopped under set-nx (SIGSTOP: its socket still takes the SET):
// the charge answers 503 "nothing was charged, try again", and that is
// true: the SET that lands when Redis goes on is given back, so the retry
// charges, once. /healthz names Redis while it is down, and the event log
// tells the key owed back. On a real redis-server, and on the embedded
// store behind a proxy that holds what is sent to it.
func TestSetNXStalledRedisTellsTheTruth(t *testing.T) {
	t.Parallel()
	t.Run("real redis stopped", func(t *testing.T) {
		t.Parallel()
		stalledRedis(t, keystest.RealRedis(t))
	})
	t.Run("embedded behind a proxy that holds bytes", func(t *testing.T) {
		t.Parallel()
		m := miniredis.NewMiniRedis()
		m.RequireAuth("pw")
		if err := m.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		stalledRedis(t, keystest.Proxy(t, m.Addr(), "redis://:pw@%s/0"))
	})
}

func stalledRedis(t *testing.T, r keystest.Stalling) {
	s := startServer(t, func(o *serverOpts) { o.cfg.KV, o.cfg.Redis = true, r.URL })
	lab := s.newLab(`{"protection":"set-nx","key_strategy":"uuid","client_timeout_ms":5000}`) // longer than Redis's 2 s
	s.must(http.StatusCreated, "POST", lab+"/charges", order42, "Idempotency-Key", "k-0")     // the pool's connections have served
	r.Stop()
	got := s.charge(lab, order42, "k-1")
	if got.Status != http.StatusServiceUnavailable || got.Header.Get("Retry-After") == "" {
		t.Fatalf("Redis stopped: %d (Retry-After %q) %s; want 503 with Retry-After", got.Status, got.Header.Get("Retry-After"), got.Body)
	}
	if p := got.JSON(t); p["type"] != "/problems/redis-unavailable" || p["limit"] != "kv" || !strings.Contains(p["detail"].(string), "nothing was charged") {
		t.Errorf("the problem: %s; want redis-unavailable, kv, nothing charged", got.Body)
	}
	if h := s.do("GET", "/healthz", ""); h.Status != http.StatusServiceUnavailable || !strings.Contains(string(h.Body), `"kv":"down"`) {
		t.Errorf("/healthz with Redis stopped: %d %s; want 503 naming kv", h.Status, h.Body)
	}
	// The lab's client sees it too, and the diagram draws it.
	op := s.operation(lab, `{"order_id":"order-43","amount":1500,"fate":"ok"}`)
	if a := lastAttempt(op); a.Status != http.StatusServiceUnavailable || a.Outcome != sim.OutcomeUnavailable {
		t.Errorf("the client's attempt: %d %s; want 503 unavailable", a.Status, a.Outcome)
	}
	r.Cont()
	var again response
	waitFor(t, 10*time.Second, "a retry that Redis answers", func() bool {
		again = s.charge(lab, order42, "k-1")
		return again.Status != http.StatusServiceUnavailable
	})
	if again.Status != http.StatusCreated {
		t.Errorf("the retry after Redis went on: %d %s; want 201: the key was given back", again.Status, again.Body)
	}
	if r := s.charge(lab, order42, "k-1"); r.Status != http.StatusOK {
		t.Errorf("the same key again: %d; want 200 duplicate", r.Status)
	}
	op = s.retry(lab, op.ID, `{"fate":"ok"}`)
	if a := lastAttempt(op); a.Status != http.StatusCreated {
		t.Errorf("the client's retry: %d %s; want 201", a.Status, a.Outcome)
	}
	if led := s.ledger(lab); led.Count != 3 {
		t.Errorf("%d payments; want 3: k-0, k-1 once, the client's once", led.Count)
	}
	page := "/labs/" + strings.TrimPrefix(lab, "/api/v1/labs/")
	waitFor(t, 5*time.Second, "the event log to tell the key owed back", func() bool {
		return strings.Contains(string(s.do("GET", page, "", "Accept-Language", "en").Body), "is owed back")
	})
	waitFor(t, 5*time.Second, "the diagram to draw the 503", func() bool {
		return strings.Contains(string(s.do("GET", page, "", "Accept-Language", "en").Body), "sd-outcome-unavailable")
	})
	s.must(http.StatusOK, "GET", "/healthz", "")
}

// The database down under set-nx (another program holds SQLite's write
// lock): the charge answers 503 naming the database, with Retry-After,
// and gives back the Redis key it took, so the retry after the database
// is back charges exactly once; /healthz says 503 meanwhile.
func TestDatabaseDownIsA503(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lab.db")
	s := startServer(t, withDB(db), func(o *serverOpts) { o.cfg.KV = true })
	lab := s.newLab(`{"protection":"set-nx"}`)
	s.must(http.StatusCreated, "POST", lab+"/charges", order42, "Idempotency-Key", "k-0")

	ctx := context.Background()
	other, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lock, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	got := s.charge(lab, order42, "k-1")
	if got.Status != http.StatusServiceUnavailable || got.Header.Get("Retry-After") == "" {
		t.Fatalf("the database locked: %d (Retry-After %q) %s; want 503 with Retry-After", got.Status, got.Header.Get("Retry-After"), got.Body)
	}
	if p := got.JSON(t); p["type"] != "/problems/database-unavailable" || p["limit"] != "database" || !strings.Contains(p["detail"].(string), "nothing was charged") {
		t.Errorf("the problem: %s; want database-unavailable, nothing charged", got.Body)
	}
	if h := s.do("GET", "/healthz", ""); h.Status != http.StatusServiceUnavailable || !strings.Contains(string(h.Body), `"database":"down"`) {
		t.Errorf("/healthz with the database locked: %d %s; want 503 naming the database", h.Status, h.Body)
	}
	if _, err := lock.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if r := s.charge(lab, order42, "k-1"); r.Status != http.StatusCreated {
		t.Errorf("the retry once the database is back: %d %s; want 201: the key was given back", r.Status, r.Body)
	}
	if r := s.charge(lab, order42, "k-1"); r.Status != http.StatusOK {
		t.Errorf("the same key again: %d; want 200 duplicate", r.Status)
	}
	if led := s.ledger(lab); led.Count != 2 {
		t.Errorf("%d payments; want 2", led.Count)
	}
	s.must(http.StatusOK, "GET", "/healthz", "")
}

// A charge sent straight to the API and told "duplicate" under set-nx
// while no payment carries its key (the crash of lesson 12) is a lost
// charge: the page's alert names its order, as it names the lab's
// client's. A duplicate whose key was paid is not.
func TestDirectLostChargeIsAlerted(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	lab := s.newLab(`{"protection":"set-nx","server_fault":"crash-after-guard"}`)
	req, _ := http.NewRequest("POST", s.URL+lab+"/charges", strings.NewReader(`{"order_id":"order-77","amount":1500}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "k-77")
	// A connection of its own: Go's transport sends a request with an
	// Idempotency-Key again by itself when a reused connection drops.
	once := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := once.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the crashed charge answered %d; want the connection dropped", resp.StatusCode)
	}
	s.must(http.StatusOK, "PATCH", lab+"/settings", `{"server_fault":"none"}`)
	s.must(http.StatusOK, "POST", lab+"/charges", `{"order_id":"order-77","amount":1500}`, "Idempotency-Key", "k-77")
	s.must(http.StatusCreated, "POST", lab+"/charges", order42, "Idempotency-Key", "k-42")
	s.must(http.StatusOK, "POST", lab+"/charges", order42, "Idempotency-Key", "k-42")
	page := string(s.must(http.StatusOK, "GET", "/labs/"+strings.TrimPrefix(lab, "/api/v1/labs/"), "", "Accept-Language", "en").Body)
	i := strings.Index(page, `data-testid="lost-charge-alert"`)
	if i < 0 {
		t.Fatal("no lost-charge alert for the duplicate sent straight to /charges")
	}
	alert := page[i:min(len(page), i+2000)]
	if !strings.Contains(alert, "order-77") || strings.Contains(alert, "order-42") {
		t.Errorf("the alert names: %s; want order-77 alone", alert)
	}
}
