package main

import (
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// tally is what a driven load did.
type tally struct {
	errors   int64           // requests that failed or got an unexpected answer
	refusals int64           // 429 and 503 answers with Retry-After, waited out and sent again
	latency  []time.Duration // every request's, including any waiting it was asked to do
	firstErr error
}

// drive runs do from w workers at once, each taking the next index until
// next says there is none; do returns nil for a right answer.
func drive(workers int, next func() (int, bool), do func(w, i int) error) tally {
	var mu sync.Mutex
	var t tally
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var lat []time.Duration
			var errs int64
			var first error
			for i, ok := next(); ok; i, ok = next() {
				start := time.Now()
				err := do(w, i)
				lat = append(lat, time.Since(start))
				if err != nil {
					errs++
					if first == nil {
						first = err
					}
				}
			}
			mu.Lock()
			t.latency = append(t.latency, lat...)
			t.errors += errs
			if t.firstErr == nil {
				t.firstErr = first
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	return t
}

// count returns a next for drive that hands out n indices from base.
func count(n int, base *atomic.Int64) func() (int, bool) {
	var taken atomic.Int64
	return func() (int, bool) {
		if taken.Add(1) > int64(n) {
			return 0, false
		}
		return int(base.Add(1)), true
	}
}

// report reports a driven benchmark's rate, errors, refusals and median
// latency, and returns the rate.
func report(b *testing.B, t tally, unit string) float64 {
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, unit)
	b.ReportMetric(float64(t.errors), "errors")
	b.ReportMetric(float64(t.refusals), "refused")
	slices.Sort(t.latency)
	if len(t.latency) > 0 {
		b.ReportMetric(float64(t.latency[len(t.latency)/2].Microseconds()), "µs-p50")
		b.ReportMetric(float64(t.latency[len(t.latency)*99/100].Microseconds()), "µs-p99")
	}
	if t.firstErr != nil {
		b.Logf("%d errors; the first: %v", t.errors, t.firstErr)
	}
	return rate
}

// bench runs b.N requests of one kind from 16 clients (16 goroutines on the
// one connection of the bare database when not overHTTP), after a first
// request of each client outside the timer, and reports them.
func (l *load) bench(b *testing.B, overHTTP bool, req func(*http.Client, int) error, unit string) float64 {
	clients := make([]*http.Client, loadClients)
	if overHTTP {
		clients = newClients(loadClients)
		defer closeClients(clients)
	}
	for _, c := range clients {
		if err := req(c, int(l.seq.Add(1))); err != nil {
			b.Fatal(err)
		}
	}
	refused := l.refusals.Load()
	sides := cpuSides{children: []*child{l.lab, l.noop}}
	before := sides.read()
	b.ResetTimer()
	t := drive(loadClients, count(b.N, &l.seq), func(w, i int) error { return req(clients[w], i) })
	b.StopTimer()
	sides.report(b, before, sides.read(), b.N)
	t.refusals = l.refusals.Load() - refused
	return report(b, t, unit)
}

// interleaved runs the four kinds in turn, 100 ms each, for as many rounds
// as the benchmark time allows, and reports each one's rate from its
// totals, with the two ratios.
func (l *load) interleaved(b *testing.B) {
	kinds := []struct {
		unit    string
		req     func(*http.Client, int) error
		clients []*http.Client
		n       int
		d       time.Duration
	}{{"inserts/s", l.insert, make([]*http.Client, loadClients), 0, 0},
		{"noop-req/s", l.noopRequest, newClients(loadClients), 0, 0},
		{"charges/s", l.charge, newClients(loadClients), 0, 0},
		{"replays/s", l.replay, newClients(loadClients), 0, 0}}
	var errs int64
	var first error
	for _, k := range kinds[1:] {
		defer closeClients(k.clients)
	}
	refused := l.refusals.Load()
	for b.Loop() {
		for i := range kinds {
			k := &kinds[i]
			start := time.Now()
			end := start.Add(100 * time.Millisecond)
			t := drive(loadClients, func() (int, bool) { return int(l.seq.Add(1)), time.Now().Before(end) },
				func(w, n int) error { return k.req(k.clients[w], n) })
			k.d += time.Since(start)
			k.n += len(t.latency)
			errs += t.errors
			if first == nil {
				first = t.firstErr
			}
		}
	}
	rates := make([]float64, len(kinds))
	for i, k := range kinds {
		rates[i] = float64(k.n) / k.d.Seconds()
		b.ReportMetric(rates[i], k.unit)
	}
	b.ReportMetric(rates[2]/rates[0], "of-insert")
	b.ReportMetric(rates[3]/rates[1], "of-noop")
	b.ReportMetric(float64(errs), "errors")
	b.ReportMetric(float64(l.refusals.Load()-refused), "refused")
	if first != nil {
		b.Logf("%d errors; the first: %v", errs, first)
	}
}
