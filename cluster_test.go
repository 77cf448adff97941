package main

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/sim/pgtest"
)

// kill -9 one of two lab processes on one PostgreSQL database while both
// take charges: the other keeps serving; every charge either acknowledged
// (201) is in the ledger, once; and a request the dead process held (its
// replay claim in flight) is answered by the survivor once the claim's
// lock times out: 409 with Retry-After before, one payment after.
func TestKillOneOfTwoProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the lab as two child processes")
	}
	shared := sharedParts(t) // two processes: set-nx's keys and the queue in servers both reach
	db := pgtest.Database(t)
	a := startChild(t, "lab", append([]string{"-db", db, "-addr", "127.0.0.1:0"}, shared...)...)
	b := startChild(t, "lab", append([]string{"-db", db, "-addr", "127.0.0.1:0"}, shared...)...)
	lab := postJSON(t, a.URL+"/api/v1/labs", "", http.StatusCreated)["id"].(string)
	path := "/api/v1/labs/" + lab
	patch(t, a.URL+path+"/settings", `{"protection":"replay","lock_timeout_ms":3000,"server_delay_ms":50}`)

	// Both take charges, each with a key of its own, from 8 clients.
	l := &twoLoad{acked: map[string]string{}, stop: make(chan struct{})}
	clients := newClients(8)
	defer closeClients(clients)
	l.start(t, clients, a, b, path)
	defer l.halt()

	// A slow request that a holds when it dies, in a lab of its own: its
	// claim stays in flight.
	slow := "/api/v1/labs/" + postJSON(t, a.URL+"/api/v1/labs", "", http.StatusCreated)["id"].(string)
	patch(t, a.URL+slow+"/settings", `{"protection":"replay","lock_timeout_ms":3000,"server_delay_ms":5000}`)
	// both take charges, enough that the kill lands in the middle of many
	waitUntil(15*time.Second, func() bool { return l.served[0].Load() >= 50 && l.served[1].Load() >= 50 })
	held := make(chan answer, 1)
	go func() {
		held <- send(t.Context(), &http.Client{}, "POST", a.URL+slow+"/charges", []byte(`{"order_id":"order-held","amount":1500}`), "Idempotency-Key", "held-key")
	}()
	if !waitUntil(15*time.Second, func() bool { return keyState(t, a.URL+slow, "held-key") == "in-flight" }) {
		t.Fatalf("a did not claim the held key within 15 s")
	}
	claimed := time.Now()
	a.kill()
	killedAt := time.Now()
	if r := <-held; r.err == nil {
		t.Errorf("the request a held was answered (%d) though a was killed", r.status)
	}
	before := l.served[1].Load()
	waitUntil(15*time.Second, func() bool { return l.served[1].Load() >= before+100 }) // b goes on alone
	l.halt()
	if l.served[1].Load() <= before {
		t.Errorf("b answered no charge after a was killed (%d before, %d after)", before, l.served[1].Load())
	}

	answered := retryHeld(t, b.URL+slow, killedAt)

	// The ledger, as b sees it: every acknowledged charge, once.
	keys := ledgerKeys(t, b.URL+path)
	if n := len(getJSON(t, b.URL+slow+"/payments")["payments"].([]any)); n != 1 {
		t.Errorf("the held request's lab has %d payments, want 1", n)
	}
	for key, by := range l.acked {
		if keys[key] != 1 {
			t.Errorf("%s was acknowledged by %s and is in the ledger %d times", key, by, keys[key])
		}
	}
	t.Logf("%d requests; acknowledged by a %d, by b %d (of them after the kill: %d); the held key charged by b %s after the kill (its lock: 3 s from the claim, seen in flight %s before the kill)",
		l.requests.Load(), l.served[0].Load(), l.served[1].Load(), l.served[1].Load()-before, answered.Round(100*time.Millisecond), killedAt.Sub(claimed).Round(10*time.Millisecond))
}

// twoLoad is the load of TestKillOneOfTwoProcesses: charges to two
// processes, and which of them acknowledged each.
type twoLoad struct {
	mu       sync.Mutex
	acked    map[string]string // key → the process that acknowledged it
	served   [2]atomic.Int64   // 201s from a and from b
	stop     chan struct{}
	once     sync.Once // closes stop
	wg       sync.WaitGroup
	requests atomic.Int64
}

// start sends charges to a and b in turn, from every client, each with a
// key of its own, until halt.
func (l *twoLoad) start(t *testing.T, clients []*http.Client, a, b *child, path string) {
	for w := range clients {
		l.wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				to, which := a, 0
				if (w+i)%2 == 1 {
					to, which = b, 1
				}
				key := fmt.Sprintf("load-%d-%d", w, i)
				l.requests.Add(1)
				r := send(t.Context(), clients[w], "POST", to.URL+path+"/charges", []byte(fmt.Sprintf(`{"order_id":"order-%d-%d","amount":100}`, w, i)), "Idempotency-Key", key)
				if r.err == nil && r.status == http.StatusCreated {
					l.served[which].Add(1)
					l.mu.Lock()
					l.acked[key] = to.URL
					l.mu.Unlock()
				}
			}
		})
	}
}

// halt stops the load and waits for its clients; a second halt does
// nothing.
func (l *twoLoad) halt() {
	l.once.Do(func() { close(l.stop) })
	l.wg.Wait()
}

// retryHeld retries the held key at the survivor: in flight until its lock
// (3 s) times out, then the survivor's. It returns when the retry was
// charged, counted from the kill.
func retryHeld(t *testing.T, slow string, killedAt time.Time) time.Duration {
	t.Helper()
	body := []byte(`{"order_id":"order-held","amount":1500}`)
	c := &http.Client{}
	r := send(t.Context(), c, "POST", slow+"/charges", body, "Idempotency-Key", "held-key")
	if time.Since(killedAt) < 2*time.Second && (r.status != http.StatusConflict || r.header.Get("Retry-After") == "") {
		t.Errorf("a retry of the held request during its lock: %d (Retry-After %q); want 409 with Retry-After", r.status, r.header.Get("Retry-After"))
	}
	deadline := time.Now().Add(15 * time.Second)
	for r.status == http.StatusConflict && time.Now().Before(deadline) {
		wait, _ := time.ParseDuration(r.header.Get("Retry-After") + "s")
		time.Sleep(min(wait, time.Second))
		r = send(t.Context(), c, "POST", slow+"/charges", body, "Idempotency-Key", "held-key")
	}
	if r.status != http.StatusCreated {
		t.Fatalf("the held request's retry after its lock: %d %s; want 201", r.status, r.body)
	}
	return time.Since(killedAt)
}

// ledgerKeys counts the payments of a lab by idempotency key, page by page.
func ledgerKeys(t *testing.T, lab string) map[string]int {
	t.Helper()
	keys := map[string]int{}
	for offset := 0; ; offset += 1000 {
		items, _ := getJSON(t, fmt.Sprintf("%s/payments?limit=1000&offset=%d", lab, offset))["payments"].([]any)
		for _, it := range items {
			if k, ok := it.(map[string]any)["idempotency_key"].(string); ok {
				keys[k]++
			}
		}
		if len(items) < 1000 {
			return keys
		}
	}
}

// keyState is the state of a lab's idempotency key (GET …/keys), or "" when
// it is not listed.
func keyState(t *testing.T, lab, key string) string {
	t.Helper()
	ks, _ := getJSON(t, lab+"/keys")["keys"].([]any)
	for _, k := range ks {
		if k, _ := k.(map[string]any); k["key"] == key {
			s, _ := k["state"].(string)
			return s
		}
	}
	return ""
}

// waitUntil polls cond every 10 ms until it holds or d has passed, and
// reports whether it held.
func waitUntil(d time.Duration, cond func() bool) bool {
	return waitEvery(d, 10*time.Millisecond, cond)
}

// waitEvery is waitUntil polling every so often: for a cond that sends a
// request each time.
func waitEvery(d, every time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
	return true
}
