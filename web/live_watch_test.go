package web_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

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
