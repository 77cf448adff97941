package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"idemlab/sim/pgtest"
)

const (
	// leaderWithin is how soon a process leads again (queued emails flow)
	// after PostgreSQL is back, or after the leader dies: SPEC's "a leader
	// again within the lease time" (store.DefaultLease, 5 s: the next
	// oldest leads from its next renewal, within a lease and a third),
	// and the email's way through the broker and the mailer's turn.
	leaderWithin = 10 * time.Second
	// heldDelayMS is the held requests' work (server_delay_ms): it spans
	// the restart, C's start and a few rounds of retries through each
	// process.
	heldDelayMS = 8000
)

// SPEC, "Many processes that survive their database" (issue 21's first
// check): three lab processes on one PostgreSQL, with one real nats-server
// and one real redis-server, and PostgreSQL restarted (pg_ctl -m fast)
// under load, while B holds two keys (a slow charge and a slow operation of
// the lab's own API). Then:
//   - no double charge: every acknowledged charge is in the ledger once, no
//     key has two payments, each held request made one payment;
//   - the held keys stay held (409 with Retry-After through A, B and C, C
//     started after the restart) until B finishes them; then a replay;
//   - a leader again within leaderWithin: a queued charge's email comes;
//   - every queued email sent once (one per payment, none twice);
//   - then kill -9 of the leader (every process seen leading): five queued
//     charges through another process each get their email within
//     leaderWithin;
//   - requests that meet the outage get 503 with Retry-After, never
//     another 5xx.
func TestPostgresRestartUnderLoad(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a PostgreSQL of its own and three lab processes")
	}
	natsURL, redisURL := realParts(t)
	pg := pgtest.Cluster(t)
	r := &restartRun{t: t, pg: pg, v: &verdicts{other: map[string]int{}},
		args: []string{"-db", pg.URL(), "-addr", "127.0.0.1:0", "-nats", natsURL, "-redis", redisURL}}
	r.a, r.b = r.startTwo()
	t.Cleanup(r.dumpOnFailure)
	r.setLive(r.a, r.b)
	// The queue as a lab has it by default: no deduplication, no fault
	// injected, so every second email is the program's own (a message
	// published twice, or consumed twice), not the lesson's.
	r.load = r.newLab(r.a, `{"protection":"replay","notify":"queue"}`)
	r.slow = r.newLab(r.b, fmt.Sprintf(`{"protection":"replay","key_strategy":"uuid","server_delay_ms":%d,"client_timeout_ms":30000,"lock_timeout_ms":30000}`, heldDelayMS))

	l := r.startLoad(3)
	defer l.halt()
	if !waitUntil(20*time.Second, func() bool { return l.count() >= 30 }) {
		t.Fatalf("fewer than 30 charges acknowledged in 20 s (%d)", l.count())
	}
	holds := r.hold()

	before := l.count()
	if err := pg.Restart("fast"); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	again := r.emailAfter(r.b, "order-after-restart", up)
	r.c = startChildWith(t, r.env, "lab", r.args...) // after the restart, as in the finding 1
	r.setLive(r.a, r.b, r.c)
	r.watchHolds(holds)
	l.halt()
	if l.count() <= before {
		t.Errorf("no charge acknowledged after the restart (%d before it, %d in all)", before, l.count())
	}
	if err := <-again; err != nil {
		t.Errorf("a leader again after the restart: %v", err)
	}
	r.afterKill(r.settle())
	r.verify(l, holds)
	t.Logf("%d charges sent, %d acknowledged (%d before the restart); %d answers met the outage (503 with Retry-After)",
		l.sent.Load(), l.count(), before, r.v.refused.Load())
}

// hold is a request B holds through the restart: its key claimed, its
// work running for heldDelayMS.
type hold struct {
	what, path, key string
	body            []byte
	done            chan struct{} // closed when B has answered: first is set
	first           answer
	conflicts       map[*child]int // 409s with Retry-After while B held it
	ran             []string       // answers that ran it again, or replayed another body
	replays         []answer       // 201s replayed while B was finishing
}

// hold sends the slow charge and the slow operation through B with their
// keys, waits until both are claimed, and sees a retry through A refused.
func (r *restartRun) hold() []*hold {
	t := r.t
	holds := []*hold{
		{what: "the held charge", path: r.slow + "/charges", key: "held-charge", body: []byte(`{"order_id":"order-held-charge","amount":1500}`)},
		{what: "the held operation", path: r.slow + "/operations", key: "held-op", body: []byte(`{"order_id":"order-held-op","amount":1500}`)},
	}
	for _, h := range holds {
		h.done, h.conflicts = make(chan struct{}), map[*child]int{}
		go func() {
			h.first = send(t.Context(), &http.Client{}, "POST", r.b.URL+h.path, h.body, "Idempotency-Key", h.key)
			close(h.done)
		}()
	}
	claimed := func() bool { // the held charge's key, and the key of the operation's charge
		k := attemptKey(t, r.b.URL+r.slow)
		return k != "" && keyState(t, r.b.URL+r.slow, k) == "in-flight" && keyState(t, r.b.URL+r.slow, "held-charge") == "in-flight"
	}
	if !waitUntil(10*time.Second, claimed) {
		t.Fatal("B did not claim the held keys within 10 s")
	}
	for _, h := range holds {
		if a := r.retry(h, r.a); a.status != http.StatusConflict || a.header.Get("Retry-After") == "" {
			t.Fatalf("%s retried through A before the restart: %d %s; want 409 with Retry-After", h.what, a.status, a.body)
		}
	}
	return holds
}

// attemptKey is the key of the first attempt of the lab's first
// operation, or "" before there is one.
func attemptKey(t *testing.T, lab string) string {
	t.Helper()
	ops, _ := getJSON(t, lab+"/operations")["operations"].([]any)
	if len(ops) == 0 {
		return ""
	}
	as, _ := ops[0].(map[string]any)["attempts"].([]any)
	if len(as) == 0 {
		return ""
	}
	k, _ := as[0].(map[string]any)["key"].(string)
	return k
}

// retry sends h's request again, with its key, through p.
func (r *restartRun) retry(h *hold, p *child) answer {
	return send(r.t.Context(), &http.Client{Timeout: 2 * heldDelayMS * time.Millisecond}, "POST", p.URL+h.path, h.body, "Idempotency-Key", h.key)
}

// watchHolds retries the held requests through every process, a round
// every 200 ms, until B has answered them; then each process must replay
// B's answer.
func (r *restartRun) watchHolds(holds []*hold) {
	answered := waitEvery(heldDelayMS*time.Millisecond+2*leaderWithin, 200*time.Millisecond, func() bool {
		open := 0
		for _, h := range holds {
			select {
			case <-h.done:
				continue
			default:
				open++
			}
			for _, p := range r.procs() {
				r.probe(h, p)
			}
		}
		return open == 0
	})
	if !answered {
		r.t.Fatalf("B has not answered the held requests within %s", heldDelayMS*time.Millisecond+2*leaderWithin)
	}
	for _, h := range holds {
		for _, a := range h.replays {
			if string(a.body) != string(h.first.body) {
				h.ran = append(h.ran, fmt.Sprintf("a replay of another answer than B's: %.200s", a.body))
			}
		}
		if h.first.err != nil || h.first.status != http.StatusCreated {
			r.t.Errorf("%s: B answered %d %v %.300s; want 201 once its work is done", h.what, h.first.status, h.first.err, h.first.body)
			continue
		}
		for _, p := range r.procs() {
			if c := h.conflicts[p]; c == 0 {
				r.t.Errorf("%s: no retry through %s was refused 409 with Retry-After while B held it", h.what, r.name(p))
			}
			r.replayed(h, p)
		}
	}
}

// probe retries h through p while B holds it, and notes the answer.
func (r *restartRun) probe(h *hold, p *child) {
	a := r.retry(h, p)
	switch {
	case a.status == http.StatusConflict && a.header.Get("Retry-After") != "":
		h.conflicts[p]++
	case a.status == http.StatusCreated && a.header.Get("Idempotent-Replayed") == "true":
		h.replays = append(h.replays, a) // B's answer, just stored, or another's
	case a.status == http.StatusCreated:
		h.ran = append(h.ran, fmt.Sprintf("through %s: 201 %.200s", r.name(p), a.body))
	default:
		r.v.note("a retry of "+h.what+" through "+r.name(p), a)
	}
}

// replayed checks that p answers h's retry with B's answer, replayed.
func (r *restartRun) replayed(h *hold, p *child) {
	var a answer
	waitEvery(5*time.Second, 100*time.Millisecond, func() bool {
		a = r.retry(h, p)
		return a.status != http.StatusConflict && a.status != http.StatusServiceUnavailable
	})
	if a.status != http.StatusCreated || a.header.Get("Idempotent-Replayed") != "true" || string(a.body) != string(h.first.body) {
		r.t.Errorf("%s retried through %s after B answered: %d (Idempotent-Replayed %q) %.160s; want B's 201 replayed: %.160s",
			h.what, r.name(p), a.status, a.header.Get("Idempotent-Replayed"), a.body, h.first.body)
	}
}
