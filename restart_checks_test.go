package main

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// keyedLoad is the load of TestPostgresRestartUnderLoad: queued charges of
// the load's lab through every live process in turn, each with a key of
// its own, sent once; which process acknowledged each.
type keyedLoad struct {
	mu    sync.Mutex
	acked map[string]*child // key → the process that answered 201
	sent  atomic.Int64
	stop  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
}

// startLoad starts n clients, each sending a charge every 40 ms (a pace
// the mailbox can keep up with), until halt.
func (r *restartRun) startLoad(n int) *keyedLoad {
	l := &keyedLoad{acked: map[string]*child{}, stop: make(chan struct{})}
	clients := newClients(n)
	for w := range clients {
		l.wg.Go(func() {
			defer clients[w].CloseIdleConnections()
			tick := time.NewTicker(40 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				case <-tick.C:
				}
				procs := r.procs()
				p := procs[(w+i)%len(procs)]
				order := fmt.Sprintf("load-%d-%d", w, i)
				l.sent.Add(1)
				a := send(r.t.Context(), clients[w], "POST", p.URL+r.load+"/charges", []byte(`{"order_id":"`+order+`","amount":100}`), "Idempotency-Key", "key-"+order)
				if a.err == nil && a.status == http.StatusCreated {
					l.mu.Lock()
					l.acked["key-"+order] = p
					l.mu.Unlock()
					continue
				}
				r.v.note("a charge through "+r.name(p), a)
			}
		})
	}
	return l
}

func (l *keyedLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// halt stops the load and waits for its clients; again, it does nothing.
func (l *keyedLoad) halt() {
	l.once.Do(func() { close(l.stop) })
	l.wg.Wait()
}

// settle charges once through each process and waits until every payment
// of the load's lab has its email; it returns the leaders.
func (r *restartRun) settle() []*child {
	for i, p := range r.procs() {
		r.charge(p, fmt.Sprintf("order-settle-%d", i))
	}
	r.allEmails("after the restart")
	return r.leaders()
}

// allEmails waits up to leaderWithin until the load's lab has as many
// emails as payments (more are reported by the mailbox's "doubled").
func (r *restartRun) allEmails(when string) {
	var pays, emails float64
	ok := waitUntil(leaderWithin, func() bool {
		p := r.procs()[0]
		ps, err1 := r.fetch(p, r.load+"/payments?limit=1")
		es, err2 := r.fetch(p, r.load+"/emails?limit=1")
		if err1 != nil || err2 != nil {
			return false
		}
		pays, _ = ps["count"].(float64)
		emails, _ = es["count"].(float64)
		return emails >= pays
	})
	switch {
	case !ok:
		r.t.Errorf("%s: %v payments and %v emails after %s; want an email for every payment", when, pays, emails, leaderWithin)
	case emails > pays:
		r.t.Errorf("%s: %v payments and %v emails; want one email for every payment", when, pays, emails)
	}
}

// afterKill kills the leaders (kill -9); five queued charges through
// another process must each get their email within leaderWithin.
func (r *restartRun) afterKill(leaders []*child) {
	if len(leaders) == 0 {
		return
	}
	var survivors []*child
	for _, p := range r.procs() {
		if !slices.Contains(leaders, p) {
			survivors = append(survivors, p)
		}
	}
	if len(survivors) == 0 {
		r.t.Errorf("every live process says it leads (/healthz): %d of them", len(leaders))
		return
	}
	var names []string
	for _, p := range leaders {
		p.kill()
		names = append(names, r.name(p))
	}
	killed := time.Now()
	r.setLive(survivors...)
	via := survivors[0]
	var orders []string
	for i := range 5 {
		order := fmt.Sprintf("order-after-kill-%d", i)
		if a := r.charge(via, order); a.status == http.StatusCreated {
			orders = append(orders, order)
		}
	}
	var got map[string]int
	waitUntil(leaderWithin-time.Since(killed), func() bool {
		got = r.emails(via, 100)
		for _, o := range orders {
			if got[o] == 0 {
				return false
			}
		}
		return true
	})
	var missing []string
	for _, o := range orders {
		if got[o] == 0 {
			missing = append(missing, o)
		}
	}
	if len(missing) > 0 || len(orders) < 5 {
		r.t.Errorf("after kill -9 of the leader (%s): of 5 queued charges through %s, %d charged, and %d got no email within %s of the kill: %v",
			strings.Join(names, ", "), r.name(via), len(orders), len(missing), leaderWithin, missing)
	} else {
		r.t.Logf("kill -9 of the leader (%s): 5 emails of charges through %s within %s", strings.Join(names, ", "), r.name(via), time.Since(killed).Round(10*time.Millisecond))
	}
	r.leaders() // a survivor says it leads now
}

// verify checks the ledgers and the mailbox, as a survivor sees them, and
// the answers no one may get.
func (r *restartRun) verify(l *keyedLoad, holds []*hold) {
	t, via := r.t, r.procs()[0].URL
	keys := ledgerKeys(t, via+r.load)
	for key, p := range l.acked {
		if keys[key] != 1 {
			t.Errorf("%s was acknowledged (201) by %s and is in the ledger %d times", key, r.name(p), keys[key])
		}
	}
	var twice []string
	for key, n := range keys {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s ×%d", key, n))
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Errorf("keys with more than one payment: %v", twice)
	}
	r.allEmails("at the end")
	if d, _ := getJSON(t, via+r.load+"/emails?limit=1")["doubled"].([]any); len(d) > 0 {
		t.Errorf("queued emails sent more than once: %v", d)
	}
	pays := countBy(getJSON(t, via+r.slow+"/payments"), "payments")
	for _, order := range []string{"order-held-charge", "order-held-op"} {
		if pays[order] != 1 {
			t.Errorf("%s has %d payments in the held requests' lab, want 1 (all: %v)", order, pays[order], pays)
		}
	}
	ops, _ := getJSON(t, via+r.slow+"/operations")["operations"].([]any)
	if len(ops) != 1 {
		t.Errorf("the held operation's key made %d operations, want 1", len(ops))
	}
	for _, op := range ops {
		as, _ := op.(map[string]any)["attempts"].([]any)
		for _, a := range as {
			if a := a.(map[string]any); a["outcome"] == "unknown" {
				t.Errorf("an attempt of the held operation was mended to unknown while B ran it: %v", a)
			}
		}
	}
	for _, h := range holds {
		for _, s := range h.ran {
			t.Errorf("%s ran again while B held its key: %s", h.what, s)
		}
	}
	r.v.mu.Lock()
	defer r.v.mu.Unlock()
	if len(r.v.other) > 0 {
		t.Errorf("answers other than the one asked for or 503 with Retry-After, by status: %v; e.g.\n%v", r.v.other, r.v.samples)
	}
}
