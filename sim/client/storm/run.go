package storm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/budget"
	"idemlab/sim/client"
	"idemlab/sim/clock"
	"idemlab/sim/labs"
)

// Storm is one storm of one lab.
type Storm struct {
	ID    string
	Lab   string
	Req   Request
	Under Under // the lab's settings it started under

	s       *Storms
	l       *labs.Lab
	rec     *record
	sent    sync.Mutex // counts the attempts against MaxAttempts
	total   int
	firstN  int64           // the lab's last payment before the storm
	ctx     context.Context // ends at the storm's deadline, or when it is stopped
	stop    context.CancelFunc
	done    chan struct{}
	spawned sync.WaitGroup // requests whose answers a lost one still waits for
}

func newStorm(s *Storms, l *labs.Lab, r Request) *Storm {
	start := time.Now()
	n := int((seconds(float64(r.DurationS)) + Drain) / Step)
	set := l.Settings()
	st := &Storm{ID: sim.NewToken(), Lab: l.ID, Req: r, s: s, l: l,
		Under: Under{Protection: set.Protection, CapacityRPS: set.CapacityRPS, Retry: set.Retry, TimeoutMS: set.ClientTimeoutMS},
		rec:   &record{start: start, series: make([]Bucket, n)}, done: make(chan struct{})}
	if r.Outage != nil { // without one, no backlog is timed
		st.rec.calm = start.Add(seconds(r.Outage.AtS + r.Outage.ForS))
	}
	st.ctx, st.stop = context.WithDeadline(s.ctx, start.Add(seconds(float64(r.DurationS))+Drain))
	return st
}

// run runs the storm's clients to their end, then counts its double
// charges in the ledger.
func (st *Storm) run() {
	release := st.l.Hold() // the lab stays in memory while its storm runs
	defer release()
	var ticker sync.WaitGroup
	defer st.tell() // its end: after done, so that its pages draw it done
	defer close(st.done)
	defer ticker.Wait()
	defer st.stop()
	ctx := st.ctx
	ticker.Go(func() { st.ticks(ctx) })
	st.firstN = st.lastPayment(ctx)
	var wg sync.WaitGroup
	for i := range st.Req.Clients {
		wg.Go(func() { st.client(ctx, i) })
	}
	wg.Wait()
	st.spawned.Wait()
	if err := st.doubles(context.WithoutCancel(ctx)); err != nil {
		st.s.cfg.Log.Warn("storm: count double charges", "lab", st.Lab, "storm", st.ID, "err", err)
	}
}

// client begins operations until the storm's duration ends, the first at
// the storm's start, then one every every(Req) on average.
func (st *Storm) client(ctx context.Context, i int) {
	seed := st.l.Settings().Seed // the lab's, as of each client's start
	rng := mrand.New(mrand.NewPCG(uint64(seed), uint64(i)))
	end := st.rec.start.Add(seconds(float64(st.Req.DurationS)))
	next := st.rec.start // the first burst: every client's first operation at once
	var b budget.Retries // the client's own over all its operations, as a gRPC channel's
	for n := 0; ; n++ {
		if !next.Before(end) || !sleepUntil(ctx, next) {
			return
		}
		if !st.operation(ctx, fmt.Sprintf("%s%d-%d", ordersOf(st.ID), i, n), rng, &b) {
			return
		}
		// the next a random while later, every() on average (a Poisson
		// stream): bursts after the first come from the retry policy
		gap := time.Duration(rng.ExpFloat64() * float64(every(st.Req)))
		if next = next.Add(gap); next.Before(time.Now()) { // late: no burst to catch up
			next = time.Now()
		}
	}
}

// operation makes one operation's attempts, with its retries, and reports
// whether the storm may go on (its attempts not spent, its time not out).
func (st *Storm) operation(ctx context.Context, order string, rng *mrand.Rand, b *budget.Retries) bool {
	var key *string
	if st.Req.Key {
		key = &order
	}
	began := time.Now()
	p := st.Under.Retry
	prev := time.Duration(p.BaseMS) * time.Millisecond
	for k := 1; ; k++ {
		t := time.Now()
		if k == 1 {
			b.First(t, p)
		} else if !b.Retry(t, p, false) {
			st.rec.ended(began, false)
			return true
		}
		if !st.spend() {
			return false
		}
		st.rec.sent(t, k == 1)
		a := st.attempt(ctx, order, key, t, rng)
		st.rec.answered(t, a)
		failed := sim.Retryable(a.status, a.err)
		b.Answered(p, failed)
		if !failed || k >= p.MaxAttempts || ctx.Err() != nil {
			st.rec.ended(began, a.status/100 == 2)
			return ctx.Err() == nil
		}
		wait := p.Backoff(k, prev, rng)
		prev = wait
		if p.RespectRetryAfter {
			wait = max(wait, min(a.after, time.Duration(p.CapMS)*time.Millisecond))
		}
		if !sleepUntil(ctx, time.Now().Add(wait)) {
			st.rec.ended(began, false)
			return false
		}
	}
}

// tickEvery is how often a running storm tells the lab's pages to draw it
// again, whatever its charges tell them.
const tickEvery = 250 * time.Millisecond

// ticks tells the lab's pages, while the storm runs, that it moved on.
func (st *Storm) ticks(ctx context.Context) {
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			st.tell()
		}
	}
}

// tell publishes that the storm moved on.
func (st *Storm) tell() {
	if b := st.s.cfg.Bus; b != nil {
		b.Publish(sim.Event{Lab: st.Lab, Kind: sim.EventStorm})
	}
}

// spend takes one of the storm's attempts, false when none is left.
func (st *Storm) spend() bool {
	st.sent.Lock()
	defer st.sent.Unlock()
	if st.total >= MaxAttempts {
		return false
	}
	st.total++
	return true
}

// answer is what an attempt got.
type answer struct {
	status   int
	after    time.Duration
	err      error
	admitted bool // the server took it
	stopped  bool // the key stopped a second charge: replayed, or "already done"
	down     bool
}

// errDown is an attempt sent while the server is down.
var errDown = errors.New("storm: connection refused: the server is down")

// attempt sends one attempt, at t, through the network and the outage.
func (st *Storm) attempt(ctx context.Context, order string, key *string, t time.Time, rng *mrand.Rand) answer {
	if down(st.Req, t.Sub(st.rec.start)) {
		return answer{err: errDown, down: true}
	}
	fate := sim.FateOK
	if rng.Float64() < st.Req.Fates.ResponseLost {
		fate = sim.FateResponseLost
	}
	g, done, err := st.s.cfg.Labs.Limits().Occupy(ctx, st.l, 1)
	if err != nil { // the in-flight caps: refused before it left
		return answer{status: http.StatusServiceUnavailable, after: time.Second, err: err}
	}
	defer done()
	net := &client.Network{Fate: fate, Next: st.s.cfg.Transport, Spawn: func(f func()) {
		release := g.Use()
		st.spawned.Go(func() { defer release(); f() })
	}}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(st.Under.TimeoutMS)*time.Millisecond)
	defer cancel()
	body := sim.Charge{OrderID: order, Amount: 100}.Body()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, st.s.cfg.BaseURL+api.ChargesPath(st.Lab), bytes.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(api.HeaderAttempt, "storm-"+st.ID+"/"+strconv.Itoa(int(t.UnixMilli()))) // not a direct charge: no scenario record
	if key != nil {
		req.Header.Set(api.HeaderKey, *key)
	}
	resp, err := net.RoundTrip(req)
	if err != nil {
		return answer{err: err, admitted: fate == sim.FateResponseLost}
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	a := answer{status: resp.StatusCode, after: api.RetryAfter(resp.Header)}
	a.admitted = a.status != http.StatusServiceUnavailable && a.status != http.StatusTooManyRequests
	a.stopped = resp.Header.Get(api.HeaderReplayed) == "true" || a.status == http.StatusOK
	return a
}

// sleepUntil waits until t, false when ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	return clock.Sleep(ctx, clock.Real(), time.Until(t)) == nil
}

// lastPayment is the lab's last payment's number.
func (st *Storm) lastPayment(ctx context.Context) int64 {
	var n int64
	st.s.cfg.Store.QueryRow(ctx, `SELECT COALESCE(MAX(n), 0) FROM payments WHERE lab_id = ?`, st.Lab).Scan(&n)
	return n
}

// doubles counts, by when it was made, every payment of the storm's orders
// after an order's first.
func (st *Storm) doubles(ctx context.Context) error {
	prefix := ordersOf(st.ID)
	rows, err := st.s.cfg.Store.Query(ctx, `
SELECT p.created_at FROM payments p JOIN order_stats o ON o.lab_id = p.lab_id AND o.order_id = p.order_id
WHERE p.lab_id = ? AND p.n > ? AND p.order_id LIKE ? AND o.charges > 1 AND p.n <> o.first_n`,
		st.Lab, st.firstN, prefix+"%") // the prefix is letters, digits and dashes
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var at int64
		if err := rows.Scan(&at); err != nil {
			return err
		}
		st.rec.doubled(time.UnixMilli(at))
	}
	return rows.Err()
}
