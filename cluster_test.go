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
	if testing.Short() {
		t.Skip("starts the lab as two child processes")
	}
	db := pgtest.Database(t)
	a := startChild(t, "lab", "-db", db, "-addr", "127.0.0.1:0")
	b := startChild(t, "lab", "-db", db, "-addr", "127.0.0.1:0")
	lab := postJSON(t, a.URL+"/api/v1/labs", "", http.StatusCreated)["id"].(string)
	path := "/api/v1/labs/" + lab
	patch(t, a.URL+path+"/settings", `{"protection":"replay","lock_timeout_ms":3000,"server_delay_ms":50}`)

	// Both take charges, each with a key of its own, from 8 clients.
	var (
		mu       sync.Mutex
		acked    = map[string]string{} // key → the process that acknowledged it
		served   [2]atomic.Int64       // 201s from a and from b
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		requests atomic.Int64
	)
	clients := newClients(8)
	defer closeClients(clients)
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				to, which := a, 0
				if (w+i)%2 == 1 {
					to, which = b, 1
				}
				key := fmt.Sprintf("load-%d-%d", w, i)
				requests.Add(1)
				r := send(t.Context(), clients[w], "POST", to.URL+path+"/charges", []byte(fmt.Sprintf(`{"order_id":"order-%d-%d","amount":100}`, w, i)), "Idempotency-Key", key)
				if r.err == nil && r.status == http.StatusCreated {
					served[which].Add(1)
					mu.Lock()
					acked[key] = to.URL
					mu.Unlock()
				}
			}
		})
	}

	// A slow request that a holds when it dies, in a lab of its own: its
	// claim stays in flight.
	slow := "/api/v1/labs/" + postJSON(t, a.URL+"/api/v1/labs", "", http.StatusCreated)["id"].(string)
	patch(t, a.URL+slow+"/settings", `{"protection":"replay","lock_timeout_ms":3000,"server_delay_ms":5000}`)
	time.Sleep(500 * time.Millisecond)
	held := make(chan answer, 1)
	go func() {
		held <- send(t.Context(), &http.Client{}, "POST", a.URL+slow+"/charges", []byte(`{"order_id":"order-held","amount":1500}`), "Idempotency-Key", "held-key")
	}()
	time.Sleep(700 * time.Millisecond) // a has claimed the key and works on it
	a.kill()
	killedAt := time.Now()
	if r := <-held; r.err == nil {
		t.Errorf("the request a held was answered (%d) though a was killed", r.status)
	}
	before := served[1].Load()
	time.Sleep(time.Second) // b goes on alone
	close(stop)
	wg.Wait()
	if served[1].Load() <= before {
		t.Errorf("b answered no charge after a was killed (%d before, %d after)", before, served[1].Load())
	}

	// The held key: in flight until its lock (3 s) times out, then b's.
	body := []byte(`{"order_id":"order-held","amount":1500}`)
	c := &http.Client{}
	r := send(t.Context(), c, "POST", b.URL+slow+"/charges", body, "Idempotency-Key", "held-key")
	if time.Since(killedAt) < 2*time.Second && (r.status != http.StatusConflict || r.header.Get("Retry-After") == "") {
		t.Errorf("a retry of the held request during its lock: %d (Retry-After %q); want 409 with Retry-After", r.status, r.header.Get("Retry-After"))
	}
	deadline := time.Now().Add(15 * time.Second)
	for r.status == http.StatusConflict && time.Now().Before(deadline) {
		wait, _ := time.ParseDuration(r.header.Get("Retry-After") + "s")
		time.Sleep(min(wait, time.Second))
		r = send(t.Context(), c, "POST", b.URL+slow+"/charges", body, "Idempotency-Key", "held-key")
	}
	if r.status != http.StatusCreated {
		t.Fatalf("the held request's retry after its lock: %d %s; want 201", r.status, r.body)
	}
	answered := time.Since(killedAt)

	// The ledger, as b sees it: every acknowledged charge, once.
	keys := map[string]int{}
	for offset := 0; ; offset += 1000 {
		items, _ := getJSON(t, fmt.Sprintf("%s%s/payments?limit=1000&offset=%d", b.URL, path, offset))["payments"].([]any)
		for _, it := range items {
			if k, ok := it.(map[string]any)["idempotency_key"].(string); ok {
				keys[k]++
			}
		}
		if len(items) < 1000 {
			break
		}
	}
	if n := len(getJSON(t, b.URL+slow+"/payments")["payments"].([]any)); n != 1 {
		t.Errorf("the held request's lab has %d payments, want 1", n)
	}
	for key, by := range acked {
		if keys[key] != 1 {
			t.Errorf("%s was acknowledged by %s and is in the ledger %d times", key, by, keys[key])
		}
	}
	t.Logf("%d requests; acknowledged by a %d, by b %d (of them after the kill: %d); the held key charged by b %s after the kill (its lock: 3 s from the claim, 0.7 s before the kill)",
		requests.Load(), served[0].Load(), served[1].Load(), served[1].Load()-before, answered.Round(100*time.Millisecond))
}
