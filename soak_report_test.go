package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// report logs what the soak saw and fails it on anything SPEC does not
// allow: a problem of any kind, a 201 missing from a kept lab, a heap that
// did not come back near where it started.
func (s *soak) report(f soakFigures) {
	t := s.t
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("soak: %v of load on %s (-lab-idle %v -max-labs %d -max-inflight %d -max-streams %d), killed at %v and restarted in %d ms",
		f.loaded.Round(time.Second), s.addr, soakIdle, soakMaxLabs, soakInFlight, soakMaxStreams, (*soakFor / 2).Round(time.Second), s.counts["restart ms"])
	t.Logf("answers seen: %s", s.summary())
	t.Logf("heap in use: start %s, peak %s, at the kill %s, after the restart %s, end %s (after %v of idling and a GC)",
		mib(f.heapStart), mib(f.peak), mib(f.heapAtKill), mib(f.heapAfterRestart), mib(f.heapEnd), f.idled.Round(time.Second))
	slices.Sort(s.opens)
	if n := len(s.opens); n > 0 {
		t.Logf("streams answered (200) in: median %v, p99 %v, max %v (%d streams)", s.opens[n/2].Round(time.Millisecond),
			s.opens[n*99/100].Round(time.Millisecond), s.opens[n-1].Round(time.Millisecond), n)
	}
	t.Logf("goroutines of the lab: start %d, end %d", f.goStart, f.goEnd)
	if f.goEnd > f.goStart+50 { // say where they wait, to tell idle connections from a leak
		a := send(context.Background(), s.api, "GET", s.cur.Load().Debug+"/debug/pprof/goroutine?debug=1", nil)
		t.Logf("the lab's goroutines at the end:\n%.4000s", a.body)
	}
	t.Logf("201s of kept labs in the ledger: %d of %d right after the load, %d of %d at the end", f.afterLoad[0], f.afterLoad[1], f.atEnd[0], f.atEnd[1])
	t.Logf("labs left to idle out: %d gone, %d still there (their 201s present)", f.letGone, f.letPresent)
	for _, c := range s.children {
		out := c.out.String()
		if n := strings.Count(out, "level=ERROR"); n > 0 {
			t.Logf("the lab logged %d errors; the first: %s", n, firstLine(out, "level=ERROR"))
		}
	}
	for kind, samples := range s.problems {
		t.Errorf("%s: %d, e.g.:\n  %s", kind, s.counts["problem "+kind], strings.Join(samples, "\n  "))
	}
	if f.afterLoad[0] != f.afterLoad[1] || f.atEnd[0] != f.atEnd[1] {
		t.Errorf("201s missing from the ledger of labs kept alive: %d after the load, %d at the end", f.afterLoad[1]-f.afterLoad[0], f.atEnd[1]-f.atEnd[0])
	}
	if f.heapEnd > f.heapStart+64<<20 {
		t.Errorf("heap in use at the end %s, more than 64 MiB over the start %s", mib(f.heapEnd), mib(f.heapStart))
	}
}

// newestLetGo returns up to n of the labs created last, newest first.
func (s *soak) newestLetGo(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for i := len(s.recent) - 1; i >= 0 && len(ids) < n; i-- {
		ids = append(ids, s.recent[i])
	}
	return ids
}

// verifyKept checks every 201 seen in the kept labs: each must be there.
// It returns how many were found, and of how many.
func (s *soak) verifyKept() [2]int {
	s.mu.Lock()
	var paths []string
	for _, ps := range s.kept {
		paths = append(paths, ps...)
	}
	s.mu.Unlock()
	found := s.each(paths, func(p string) bool {
		a := s.get(p)
		if a.err != nil || a.status != http.StatusOK {
			s.problem("201 lost from a kept lab", fmt.Sprintf("GET %s: %d %v %.200s", p, a.status, a.err, a.body))
			return false
		}
		return true
	})
	return [2]int{found, len(paths)}
}

// verifyLetGo checks the 201s of the labs left to idle out: a lab may be
// gone (404), but a lab still there must hold its payment.
func (s *soak) verifyLetGo() (gone, present int) {
	s.mu.Lock()
	recs := append([][2]string(nil), s.letGo...)
	s.mu.Unlock()
	paths := make([]string, len(recs))
	for i, r := range recs {
		paths[i] = r[0] + " " + r[1]
	}
	present = s.each(paths, func(p string) bool {
		id, path, _ := strings.Cut(p, " ")
		a := s.get(path)
		switch {
		case a.err == nil && a.status == http.StatusOK:
			return true
		case a.err == nil && a.status == http.StatusNotFound:
			if l := s.get("/api/v1/labs/" + id + "/settings"); l.err == nil && l.status == http.StatusNotFound {
				return false // idled out, as designed
			}
		}
		s.problem("201 lost from a lab that is still there", fmt.Sprintf("GET %s: %d %v %.200s", path, a.status, a.err, a.body))
		return false
	})
	return len(recs) - present, present
}

// each runs check on every item from 16 goroutines and counts the trues.
func (s *soak) each(items []string, check func(string) bool) int {
	var next, ok atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(items)); i = next.Add(1) - 1 {
				if check(items[i]) {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(ok.Load())
}

// heap returns the lab's heap in use (runtime.MemStats.HeapInuse, from
// /debug/vars), after a GC when gc is set (the heap profile's ?gc=1).
func (s *soak) heap(gc bool) uint64 {
	c := s.cur.Load()
	if gc {
		for range 2 {
			send(context.Background(), s.api, "GET", c.Debug+"/debug/pprof/heap?gc=1", nil)
			time.Sleep(500 * time.Millisecond)
		}
	}
	a := send(context.Background(), s.api, "GET", c.Debug+"/debug/vars", nil)
	var v struct{ Memstats struct{ HeapInuse uint64 } }
	if a.err != nil || json.Unmarshal(a.body, &v) != nil {
		return 0
	}
	return v.Memstats.HeapInuse
}

// goroutines returns the number of the lab's goroutines.
func (s *soak) goroutines() int {
	a := send(context.Background(), s.api, "GET", s.cur.Load().Debug+"/debug/pprof/goroutine?debug=1", nil)
	_, rest, _ := strings.Cut(string(a.body), "total ")
	n, _ := strconv.Atoi(strings.TrimSpace(firstLine(rest, "")))
	return n
}

// summary lists the counts of the soak, sorted by name.
func (s *soak) summary() string {
	var names []string
	for k := range s.counts {
		names = append(names, k)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, k := range names {
		fmt.Fprintf(&b, "\n  %-50s %d", k, s.counts[k])
	}
	return b.String()
}

// sleep waits d or until ctx ends, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// firstLine returns the first line of s that contains sub.
func firstLine(s, sub string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			return strings.TrimRight(line, "\n")
		}
	}
	return ""
}
