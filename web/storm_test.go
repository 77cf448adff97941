package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/idempotency"
)

// storm sends n identical charge requests with one key at the same moment,
// from n goroutines over n connections, and counts the statuses.
func storm(t *testing.T, s *testServer, lab string, n int, key string) map[int]int {
	t.Helper()
	return stormOver(t, []*testServer{s}, lab, n, key)
}

// stormOver is storm with the requests dealt in turn to several servers
// of one database.
func stormOver(t *testing.T, servers []*testServer, lab string, n int, key string) map[int]int {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n}}
	defer client.CloseIdleConnections()
	start := make(chan struct{})
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		wg       sync.WaitGroup
	)
	for i := range n {
		s := servers[i%len(servers)]
		wg.Go(func() {
			req, _ := http.NewRequest("POST", s.URL+lab+"/charges", strings.NewReader(`{"order_id":"order-42","amount":1500}`))
			req.Header.Set("Content-Type", "application/json")
			if key != "" {
				req.Header.Set("Idempotency-Key", key)
			}
			<-start
			resp, err := client.Do(req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("request: %v", err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 500 && statuses[resp.StatusCode] == 0 { // the first of each, to say why
				t.Logf("a %d: %.300s", resp.StatusCode, b)
			}
			statuses[resp.StatusCode]++
		})
	}
	close(start)
	wg.Wait()
	return statuses
}

// A duplicate storm: 500 concurrent requests with one key leave exactly one
// payment under every protection that promises it, and never a 5xx.
func TestDuplicateStorm(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("storm skipped in -short mode")
	}
	s := startServer(t, withParts())
	for _, protection := range []string{"unique", "on-conflict", "replay", "set-nx"} {
		t.Run(protection, func(t *testing.T) {
			lab := s.newLab(fmt.Sprintf(`{"protection":%q}`, protection))
			statuses := storm(t, s, lab, 500, "storm-key-1")
			for code, n := range statuses {
				if code >= 500 {
					t.Errorf("%d answers with status %d", n, code)
				}
			}
			if statuses[http.StatusCreated] < 1 {
				t.Errorf("statuses %v: no request charged", statuses)
			}
			if protection != "replay" && statuses[http.StatusCreated] != 1 {
				t.Errorf("statuses %v: want exactly one 201, the rest 200 duplicate", statuses)
			}
			if l := s.ledger(lab); l.Count != 1 || l.Total != 1500 {
				t.Errorf("after the storm: %d charges, %d ₽; want 1, 1500 (statuses %v)", l.Count, l.Total, statuses)
			}
		})
	}
}

// Without an atomic guard the same storm charges many times: the test above
// is not passing by accident of scheduling.
func TestStormWithoutProtectionChargesEveryRequest(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"protection":"none"}`)
	statuses := storm(t, s, lab, 50, "storm-key-1")
	if l := s.ledger(lab); l.Count != 50 || statuses[http.StatusCreated] != 50 {
		t.Errorf("%d charges (statuses %v), want 50", l.Count, statuses)
	}
}

// Under SELECT-then-INSERT with a gap, two parallel requests with one key
// both pass the check: reliably two payments, trial after trial.
func TestCheckThenInsertRace(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for trial := range 5 {
		lab := s.newLab(`{"protection":"check-then-insert","check_gap_ms":500}`)
		statuses := storm(t, s, lab, 2, fmt.Sprintf("race-%d", trial))
		if l := s.ledger(lab); l.Count != 2 || statuses[http.StatusCreated] != 2 {
			t.Errorf("trial %d: %d charges (statuses %v), want 2", trial, l.Count, statuses)
		}
		// and a later retry, after the race, is caught by the check
		if r := s.do("POST", lab+"/charges", `{"order_id":"order-42","amount":1500}`, "Idempotency-Key", fmt.Sprintf("race-%d", trial)); r.Status != http.StatusOK {
			t.Errorf("trial %d: sequential retry got %d, want 200 duplicate", trial, r.Status)
		}
	}
}

// A record left in flight by a crashed request blocks its key with 409 only
// until lock_timeout_ms; then a retry claims it and charges exactly once.
func TestCrashedClaimBecomesClaimable(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	s := startServer(t, withClock(clock))
	prefix := s.newLab(`{"protection":"replay","lock_timeout_ms":5000}`)
	id := strings.TrimPrefix(prefix, "/api/v1/labs/")
	body := `{"order_id":"order-42","amount":1500}`
	fingerprint := sim.Charge{OrderID: "order-42", Amount: 1500}.Fingerprint()

	// The "crash": a request claimed the key and never finished.
	l, err := s.House.Labs.Lab(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.House.Records.Claim(context.Background(), l, idempotency.ScopeCharges, "crash-key", fingerprint, time.Hour, 5*time.Second); err != nil {
		t.Fatalf("claim: %v", err)
	}
	r := s.do("POST", prefix+"/charges", body, "Idempotency-Key", "crash-key")
	if r.Status != http.StatusConflict || r.Header.Get("Retry-After") != "5" {
		t.Fatalf("retry during the lock: %d, Retry-After %q; want 409 with Retry-After 5\n%s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	clock.Advance(4 * time.Second)
	if r := s.do("POST", prefix+"/charges", body, "Idempotency-Key", "crash-key"); r.Status != http.StatusConflict || r.Header.Get("Retry-After") != "1" {
		t.Fatalf("retry 1 s before the lock ends: %d, Retry-After %q; want 409, 1", r.Status, r.Header.Get("Retry-After"))
	}
	clock.Advance(time.Second)
	first := s.must(http.StatusCreated, "POST", prefix+"/charges", body, "Idempotency-Key", "crash-key")
	again := s.must(http.StatusCreated, "POST", prefix+"/charges", body, "Idempotency-Key", "crash-key")
	if string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("after the takeover, a retry got %s, want the replay of %s", again.Body, first.Body)
	}
	if l := s.ledger(prefix); l.Count != 1 {
		t.Errorf("%d charges, want exactly 1", l.Count)
	}
}

// A request that outlives its lock loses its claim to the retry that took
// the key over, and rolls back: still exactly one charge.
func TestSlowRequestPastItsLockDoesNotChargeTwice(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	s := startServer(t, withClock(clock))
	prefix := s.newLab(`{"protection":"replay","lock_timeout_ms":100,"server_delay_ms":1500}`)
	body := `{"order_id":"order-42","amount":1500}`
	var wg sync.WaitGroup
	codes := make([]int, 2)
	wg.Go(func() { codes[0] = s.do("POST", prefix+"/charges", body, "Idempotency-Key", "slow-key").Status })
	// The second comes once the first has claimed the key and its lock has
	// run out, while the first still works (1.5 s).
	waitFor(t, 5*time.Second, "the first to claim the key", func() bool {
		return slices.ContainsFunc(s.keysOf(prefix), func(k apiKey) bool { return k.Key == "slow-key" && k.State == "in-flight" })
	})
	clock.Advance(200 * time.Millisecond) // twice the lock's 100 ms
	codes[1] = s.do("POST", prefix+"/charges", body, "Idempotency-Key", "slow-key").Status
	wg.Wait()
	if l := s.ledger(prefix); l.Count != 1 {
		t.Errorf("%d charges (statuses %v), want exactly 1", l.Count, codes)
	}
	if codes[0] != http.StatusConflict || codes[1] != http.StatusCreated {
		t.Errorf("statuses %v, want [409 201]: the first lost its claim, the second charged", codes)
	}
}
