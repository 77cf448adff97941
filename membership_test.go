package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"idemlab/sim/pgtest"
)

// childLease is the lease of the children of these tests, shorter than a
// real one so that a lapse or a death is seen in a second or two.
const childLease = 1500 * time.Millisecond

// memberEnv gives a member its short lease.
var memberEnv = []string{leaseEnv + "=" + childLease.String()}

// sharedParts are the flags of a process that shares its Redis and its
// NATS with the other processes on its database: the real servers of
// $IDEMLAB_TEST_REDIS and $IDEMLAB_TEST_NATS (.ci/run starts them). Without
// them the test skips, or fails under CI=true.
func sharedParts(t testing.TB) []string {
	t.Helper()
	var args []string
	for _, p := range []struct{ env, flag, example string }{
		{"IDEMLAB_TEST_REDIS", "-redis", "redis://127.0.0.1:PORT/0"},
		{"IDEMLAB_TEST_NATS", "-nats", "nats://127.0.0.1:PORT"},
	} {
		url := os.Getenv(p.env)
		if url == "" {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not set: CI must start one for this test (.ci/run)", p.env)
			}
			t.Skipf("several processes on one database share a real Redis and NATS: set %s=%s to run this test", p.env, p.example)
		}
		args = append(args, p.flag, url)
	}
	return args
}

// member starts a lab process on the database with a short lease and the
// given flags beside -db and -addr.
func member(t *testing.T, db string, flags ...string) *child {
	t.Helper()
	return startChildWith(t, memberEnv, "lab", append([]string{"-db", db, "-addr", "127.0.0.1:0"}, flags...)...)
}

// restartStandIn ends every session on the database, as a restart of
// PostgreSQL does: the processes' connections break, and whatever a
// session alone held (an advisory lock) goes with it.
func restartStandIn(t *testing.T, dsn string) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no session of the lab's processes to end")
	}
}

// A process that joins while another runs a slow operation (its key's
// claim in flight, its attempt pending) mends none of it, even after every
// session on the database ended (a restart of PostgreSQL, which drops
// what a session alone held): a retry of the key is 409 while the first
// request runs, and then the first request's answer; one payment.
func TestJoiningProcessLeavesLiveWorkAlone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the lab as two child processes")
	}
	shared := sharedParts(t)
	db := pgtest.Database(t)
	b := member(t, db, shared...)
	lab := "/api/v1/labs/" + postJSON(t, b.URL+"/api/v1/labs", "", http.StatusCreated)["id"].(string)
	patch(t, b.URL+lab+"/settings", `{"protection":"replay","key_strategy":"uuid","server_delay_ms":6000,"client_timeout_ms":10000}`)
	body := []byte(`{"order_id":"order-1","amount":1500}`)
	first := make(chan answer, 1)
	go func() {
		first <- send(context.Background(), &http.Client{}, "POST", b.URL+lab+"/operations", body, "Idempotency-Key", "myop-2")
	}()
	c := &http.Client{}
	if !waitUntil(10*time.Second, func() bool { return pendingOps(t, b.URL+lab) == 1 }) {
		t.Fatal("the first request's attempt was not under way within 10 s")
	}

	restartStandIn(t, db)
	joined := member(t, db, shared...)
	retries := 0
	for {
		select {
		case a := <-first:
			if a.status != http.StatusCreated {
				t.Fatalf("the first request: %d %s", a.status, a.body)
			}
			op := opID(t, a.body)
			again := send(context.Background(), c, "POST", joined.URL+lab+"/operations", body, "Idempotency-Key", "myop-2")
			if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" || opID(t, again.body) != op {
				t.Errorf("the retry after the first request: %d replayed %q %s; want its answer again (%s)",
					again.status, again.header.Get("Idempotent-Replayed"), again.body, op)
			}
			if n := len(getJSON(t, joined.URL+lab+"/payments")["payments"].([]any)); n != 1 {
				t.Errorf("%d payments, want 1", n)
			}
			if got := attemptOutcome(t, joined.URL+lab+"/operations/"+op); got != "charged" {
				t.Errorf("the first request's attempt ended %q, want charged: the joining process mended it", got)
			}
			if retries == 0 {
				t.Error("no retry was sent while the first request ran")
			}
			return
		case <-time.After(200 * time.Millisecond):
		}
		r := send(context.Background(), c, "POST", joined.URL+lab+"/operations", body, "Idempotency-Key", "myop-2")
		if r.status == http.StatusCreated && r.header.Get("Idempotent-Replayed") == "true" {
			continue // the first request ended meanwhile: its answer is checked next
		}
		if r.status != http.StatusConflict {
			t.Fatalf("a retry while the first request runs: %d %s; want 409 (the key is held by a live process)", r.status, r.body)
		}
		retries++
	}
}

// pendingOps is how many of the lab's operations have an attempt pending.
func pendingOps(t *testing.T, lab string) int {
	t.Helper()
	n := 0
	ops, _ := getJSON(t, lab+"/operations")["operations"].([]any)
	for _, op := range ops {
		as, _ := op.(map[string]any)["attempts"].([]any)
		for _, a := range as {
			if a.(map[string]any)["outcome"] == "pending" {
				n++
				break
			}
		}
	}
	return n
}

// opID reads the id of an operation from its JSON.
func opID(t *testing.T, body []byte) string {
	t.Helper()
	var op struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &op); err != nil || op.ID == "" {
		t.Fatalf("not an operation: %s", body)
	}
	return op.ID
}

// attemptOutcome is the outcome of an operation's first attempt.
func attemptOutcome(t *testing.T, url string) string {
	t.Helper()
	as, _ := getJSON(t, url)["attempts"].([]any)
	if len(as) == 0 {
		t.Fatalf("%s has no attempt", url)
	}
	o, _ := as[0].(map[string]any)["outcome"].(string)
	return o
}

// After every session on the database ended (a restart of PostgreSQL),
// kill -9 of the process that leads: another leads within the lease, and
// the queue's messages of charges taken by the survivor go out, each email
// once.
func TestLeaderAfterRestartAndKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the lab as two child processes")
	}
	shared := sharedParts(t)
	db := pgtest.Database(t)
	a := member(t, db, shared...) // the first: it leads
	b := member(t, db, shared...)
	lab := "/api/v1/labs/" + postJSON(t, b.URL+"/api/v1/labs", "", http.StatusCreated)["id"].(string)
	patch(t, b.URL+lab+"/settings", `{"notify":"queue"}`)
	postJSON(t, b.URL+lab+"/charges", `{"order_id":"order-0","amount":100}`, http.StatusCreated)
	if !waitUntil(10*time.Second, func() bool { return emailCount(t, b.URL+lab) == 1 }) {
		t.Fatal("no email within 10 s while both processes ran")
	}
	if la, lb := leads(t, a.URL), leads(t, b.URL); !la || lb {
		t.Errorf("/healthz says the first process leads %v, the second %v; want the first alone", la, lb)
	}

	restartStandIn(t, db)
	a.kill()
	killed := time.Now()
	var refusals atomic.Int64 // 503s with Retry-After while the connections come back
	for i := 1; i <= 5; i++ {
		charge := fmt.Sprintf(`{"order_id":"order-%d","amount":100}`, i)
		if r := sendHonouring(&http.Client{}, &refusals, "POST", b.URL+lab+"/charges", []byte(charge)); r.status != http.StatusCreated {
			t.Fatalf("a charge through the survivor: %d %s", r.status, r.body)
		}
	}
	// The lease, then a renewal of the survivor's, its relay's next look
	// (every second), and the email's way: well within 4 leases.
	within := 4*childLease + 2*time.Second
	if !waitUntil(within, func() bool { return emailCount(t, b.URL+lab) == 6 }) {
		t.Fatalf("%d emails of 6 %s after the leader was killed: nobody leads\n%s", emailCount(t, b.URL+lab), within, b.out.String())
	}
	t.Logf("the survivor led and sent every email %s after the kill (%d refusals while the connections came back)",
		time.Since(killed).Round(10*time.Millisecond), refusals.Load())
	if said := strings.Contains(b.out.String(), "this process leads"); !leads(t, b.URL) || !said {
		t.Errorf("the survivor leads, but its /healthz says leads %v; its log says it leads: %v", leads(t, b.URL), said)
	}
	if msgs := getJSON(t, b.URL+lab+"/messages"); !allDone(msgs) {
		t.Errorf("messages not all done: %v", msgs)
	}
}

// leads is what the process at base says of itself in /healthz: whether
// it leads.
func leads(t *testing.T, base string) bool {
	t.Helper()
	return getJSON(t, base+"/healthz")["leads"] == true
}

// emailCount is how many emails the lab has received.
func emailCount(t *testing.T, lab string) int {
	t.Helper()
	es, _ := getJSON(t, lab+"/emails")["emails"].([]any)
	return len(es)
}

// A process that would keep set-nx's keys (the embedded Redis) or the
// queue's messages (the embedded NATS) to itself does not start on a
// database where another process runs: it says which flags it needs. One
// that shares both does not start beside one that keeps them.
func TestPrivatePartsRefusedBesideAnother(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the lab as child processes")
	}
	shared := sharedParts(t)
	db := pgtest.Database(t)
	alone := member(t, db) // embedded Redis and NATS: it is alone, so it may
	postJSON(t, alone.URL+"/api/v1/labs", "", http.StatusCreated)

	for _, tc := range []struct {
		name  string
		flags []string
		want  []string
	}{
		{"both embedded", nil, []string{"another lab process", "-redis", "-nats"}},
		{"embedded Redis", shared[2:], []string{"another lab process", "-redis"}},
		{"embedded NATS", shared[:2], []string{"another lab process", "-nats"}},
		{"shared beside embedded", shared, []string{"-redis", "-nats"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := launchWith(t, memberEnv, "lab", append([]string{"-db", db, "-addr", "127.0.0.1:0"}, tc.flags...)...)
			if err == nil {
				c.stop()
				t.Fatalf("a second process (%v) started beside one that runs its own Redis and NATS", tc.flags)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal does not say %q:\n%v", w, err)
				}
			}
		})
	}
}
