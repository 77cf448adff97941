package web_test

// Growth benchmarks: does a lab's cost stay flat as its history grows, and
// does one big, busy lab delay another lab's live updates (SPEC.md, "A lab
// among many")? Each interleaves its two conditions sample by sample on one
// server, so that the machine's drift hits both alike, and reports medians
// and their ratio (target: at most 1.2). Nothing asserts anything about time.
//
//	go test -run '^$' -bench 'Growth|LiveUpdateIsolation' ./web/

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkGrowth compares a lab holding 100 operations with one holding
// 10,000, both in one server, each with three live streams open: the median
// time of one operation (POST …/operations, fate ok), of the live update it
// causes (from the POST until all three streams have the new total) and of
// the page (GET /labs/{id}). About a tenth of the orders are charged twice,
// so the big lab's double-charge alert has about a thousand orders to name.
func BenchmarkGrowth(b *testing.B) {
	s := startServer(b, withDB(filepath.Join(b.TempDir(), "lab.db")))
	sizes := []int{100, 10_000}
	labs := make([]string, len(sizes))
	for k, n := range sizes {
		labs[k] = s.newLab(`{"protection":"none","key_strategy":"none","network":"ok"}`)
		start := time.Now()
		grow(b, s, labs[k], 0, n)
		b.Logf("%d operations built in %v", n, time.Since(start).Round(time.Millisecond))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watches := make([]*watch, len(labs))
	for k, l := range labs {
		watches[k] = watchLab(b, ctx, s, l, 3)
	}
	op := make([][]time.Duration, len(labs))
	live := make([][]time.Duration, len(labs))
	page := make([][]time.Duration, len(labs))
	held := append([]int(nil), sizes...)
	pageBytes := make([]int, len(labs))
	sample := func(k int) {
		start := time.Now()
		s.must(http.StatusCreated, "POST", labs[k]+"/operations", string(opBody(held[k])))
		op[k] = append(op[k], time.Since(start))
		held[k]++
		watches[k].wait(b, int64(held[k]))
		live[k] = append(live[k], time.Since(start))
		start = time.Now()
		r := s.must(http.StatusOK, "GET", "/labs/"+strings.TrimPrefix(labs[k], "/api/v1/labs/"), "")
		page[k] = append(page[k], time.Since(start))
		pageBytes[k] = len(r.Body)
	}
	for k := range labs { // warm both, outside the figures
		sample(k)
		op[k], live[k], page[k] = nil, nil, nil
	}
	for b.Loop() {
		// 15 rounds, or as many as 45 s allow (at least 5): a big lab that
		// renders slowly must not make the benchmark endless.
		start := time.Now()
		for r := 0; r < 15 && (r < 5 || time.Since(start) < 45*time.Second); r++ {
			for k := range labs {
				sample(k)
			}
		}
	}
	for _, m := range []struct {
		name string
		d    [][]time.Duration
	}{{"op", op}, {"live", live}, {"page", page}} {
		small, big := median(m.d[0]), median(m.d[1])
		b.ReportMetric(ms(small), m.name+"-ms@100")
		b.ReportMetric(ms(big), m.name+"-ms@10000")
		b.ReportMetric(float64(big)/float64(small), m.name+"-ratio")
	}
	b.ReportMetric(float64(pageBytes[0])/1000, "page-KB@100")
	b.ReportMetric(float64(pageBytes[1])/1000, "page-KB@10000")
	b.ReportMetric(float64(len(page[0])), "samples")
}

// BenchmarkLiveUpdateIsolation is the latency of a live update in a small
// lab B (a charge, until B's open stream shows the new total) while lab A,
// holding 10,000 operations with three streams open, runs a loop of
// operations (one every 20 ms at most, a busy classroom); against the same
// while A is idle (its streams open, its last update delivered), on the
// same server. Idle and busy samples alternate. A sample that takes over
// 10 s is counted as 10 s (and in "late"), so that a server that starves
// B's updates still gives a figure in bounded time.
func BenchmarkLiveUpdateIsolation(b *testing.B) {
	s := startServer(b, withDB(filepath.Join(b.TempDir(), "lab.db")))
	const size = 10_000
	a := s.newLab(`{"protection":"none","key_strategy":"none","network":"ok"}`)
	grow(b, s, a, 0, size)
	lb := s.newLab(`{"protection":"none"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wa, wb := watchLab(b, ctx, s, a, 3), watchLab(b, ctx, s, lb, 1)

	// The busy loop runs A's operations while gate is free; the benchmark
	// holds gate to make A idle.
	var gate sync.Mutex
	var aOps, aErrs atomic.Int64
	aOps.Store(size)
	gate.Lock()
	paused := true
	loop := make(chan struct{})
	go func() {
		defer close(loop)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			gate.Lock()
			st, _, err := post(ctx, s.client, s.URL+a+"/operations", opBody(int(aOps.Load())))
			if err == nil && st == http.StatusCreated {
				aOps.Add(1)
			} else if ctx.Err() == nil {
				aErrs.Add(1)
			}
			gate.Unlock()
			select {
			case <-tick.C:
			case <-ctx.Done():
			}
		}
	}()
	defer func() {
		cancel()
		if paused {
			gate.Unlock()
		}
		<-loop
	}()

	const censor = 10 * time.Second
	var idle, busy []time.Duration
	var bCount int64
	late := 0
	charge := func() time.Duration {
		start := time.Now()
		s.must(http.StatusCreated, "POST", lb+"/charges", `{"order_id":"order-b","amount":100}`)
		bCount++
		if !wb.waitFor(bCount, censor) {
			late++
			return censor
		}
		return time.Since(start)
	}
	charge() // warm
	for b.Loop() {
		// 20 pairs, or as many as 60 s allow (at least 3).
		start := time.Now()
		for r := 0; r < 20 && (r < 3 || time.Since(start) < 60*time.Second); r++ {
			wa.waitFor(aOps.Load(), censor) // A idle, its streams caught up
			idle = append(idle, charge())
			gate.Unlock() // A busy
			paused = false
			time.Sleep(100 * time.Millisecond)
			busy = append(busy, charge())
			gate.Lock()
			paused = true
		}
	}
	b.ReportMetric(ms(median(idle)), "live-ms-idle")
	b.ReportMetric(ms(median(busy)), "live-ms-busy")
	b.ReportMetric(float64(median(busy))/float64(median(idle)), "busy/idle")
	b.ReportMetric(float64(late), "late")
	b.ReportMetric(float64(len(busy)), "samples")
	b.ReportMetric(float64(aOps.Load()), "a-ops")
	if n := aErrs.Load(); n > 0 {
		b.Errorf("%d of lab A's operations failed", n)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// opBody is the i-th operation of a grown lab: every tenth one charges an
// order charged a few operations before, so about a tenth of the orders
// end up charged twice.
func opBody(i int) []byte {
	order := i
	if i%10 == 9 {
		order = i - 5
	}
	return []byte(`{"order_id":"order-` + strconv.Itoa(order) + `","amount":` + strconv.Itoa(100+i%7) + `,"fate":"ok"}`)
}

// grow adds operations from to n-1 to a lab through the API, from eight
// clients at once.
func grow(b *testing.B, s *testServer, prefix string, from, n int) {
	b.Helper()
	var next atomic.Int64
	next.Store(int64(from))
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				st, body, err := post(context.Background(), s.client, s.URL+prefix+"/operations", opBody(i))
				if err == nil && st != http.StatusCreated {
					err = fmt.Errorf("operation %d: %d %.200s", i, st, body)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	if got := s.ledger(prefix).Count; got != int64(n) {
		b.Fatalf("the lab holds %d payments after %d operations", got, n)
	}
}

// post posts a JSON body and reads the answer.
func post(ctx context.Context, c *http.Client, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// watch is a lab's open live streams, read continuously: each remembers
// the last total count it received.
type watch struct {
	counts  []atomic.Int64
	changed []chan struct{} // a stream's signal that its count moved
}

// watchLab opens n live streams of the lab and reads them until ctx ends.
func watchLab(b *testing.B, ctx context.Context, s *testServer, prefix string, n int) *watch {
	b.Helper()
	w := &watch{counts: make([]atomic.Int64, n), changed: make([]chan struct{}, n)}
	transport := &http.Transport{}
	b.Cleanup(transport.CloseIdleConnections)
	url := s.URL + "/labs/" + strings.TrimPrefix(prefix, "/api/v1/labs/") + "/events"
	for i := range n {
		w.counts[i].Store(-1)
		w.changed[i] = make(chan struct{}, 1)
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := (&http.Client{Transport: transport}).Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %d", url, resp.StatusCode)
		}
		go func() {
			defer resp.Body.Close()
			r := bufio.NewReaderSize(resp.Body, 256<<10)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if _, rest, ok := strings.Cut(line, `data-testid="total-count">`); ok {
					w.counts[i].Store(digits(rest))
					select {
					case w.changed[i] <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	w.wait(b, 0)
	return w
}

// wait waits until every stream has received a total of at least n,
// failing the benchmark after a minute.
func (w *watch) wait(b *testing.B, n int64) {
	b.Helper()
	if !w.waitFor(n, time.Minute) {
		b.Fatalf("the streams have totals %v after a minute, want %d", w.totals(), n)
	}
}

// waitFor waits until every stream has received a total of at least n, or
// until d has passed, and reports whether they have.
func (w *watch) waitFor(n int64, d time.Duration) bool {
	deadline := time.After(d)
	for i := range w.counts {
		for w.counts[i].Load() < n {
			select {
			case <-w.changed[i]:
			case <-deadline:
				return false
			}
		}
	}
	return true
}

func (w *watch) totals() []int64 {
	t := make([]int64, len(w.counts))
	for i := range w.counts {
		t[i] = w.counts[i].Load()
	}
	return t
}

// digits reads the number at the start of s, skipping digit-group
// separators, up to the end of the element.
func digits(s string) int64 {
	var n int64
	for _, r := range s {
		switch {
		case r == '<':
			return n
		case r >= '0' && r <= '9':
			n = n*10 + int64(r-'0')
		}
	}
	return n
}
