package web_test

// Growth benchmarks: does a lab's cost stay flat as its history grows, and
// does one big, busy lab delay another lab's live updates (SPEC.md, "A lab
// among many")? Each interleaves its two conditions sample by sample on one
// server, so that the machine's drift hits both alike, and reports medians
// and their ratio (target: at most 1.2). Nothing asserts anything about time.
//
//	go test -run '^$' -bench 'Growth|LiveUpdateIsolation' ./web/

import (
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
	loop := busyLoop(ctx, s, a, &gate, &aOps, &aErrs)
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

// busyLoop runs lab a's operations, one every 20 ms at most, each while it
// holds gate, until ctx ends: ops counts those done (it starts at the lab's
// size) and errs those that failed. The channel closes when the loop ends.
func busyLoop(ctx context.Context, s *testServer, a string, gate *sync.Mutex, ops, errs *atomic.Int64) <-chan struct{} {
	loop := make(chan struct{})
	go func() {
		defer close(loop)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			gate.Lock()
			st, _, err := post(ctx, s.client, s.URL+a+"/operations", opBody(int(ops.Load())))
			if err == nil && st == http.StatusCreated {
				ops.Add(1)
			} else if ctx.Err() == nil {
				errs.Add(1)
			}
			gate.Unlock()
			select {
			case <-tick.C:
			case <-ctx.Done():
			}
		}
	}()
	return loop
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
