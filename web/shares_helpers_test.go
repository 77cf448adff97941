package web_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/sim/clock"
	"idemlab/web"
)

// openStreams opens n live streams of path from s, read until ctx ends;
// it returns how many opened, and one refusal of each status.
func (s *testServer) openStreams(ctx context.Context, path string, n int) (opened int, refused map[int]response) {
	s.tb.Helper()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		next = make(chan struct{})
	)
	refused = map[int]response{}
	for range 16 {
		wg.Go(func() {
			for range next {
				req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+path, nil)
				resp, err := s.client.Do(req)
				if err != nil {
					s.tb.Errorf("GET %s: %v", path, err)
					return
				}
				if resp.StatusCode == http.StatusOK {
					mu.Lock()
					opened++
					mu.Unlock()
					go func() { io.Copy(io.Discard, resp.Body); resp.Body.Close() }()
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				refused[resp.StatusCode] = response{Status: resp.StatusCode, Header: resp.Header, Body: b}
				mu.Unlock()
			}
		})
	}
	for range n {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	return opened, refused
}

// follow opens a live stream of path and sends each total count it
// receives, until ctx ends.
func (s *testServer) follow(ctx context.Context, path string) <-chan int64 {
	s.tb.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+path, nil)
	resp, err := s.client.Do(req)
	if err != nil {
		s.tb.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.tb.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	totals := make(chan int64, 64)
	go func() {
		defer resp.Body.Close()
		r := bufio.NewReaderSize(resp.Body, 256<<10)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if _, rest, ok := strings.Cut(line, `data-testid="total-count">`); ok {
				select {
				case totals <- digits(rest):
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return totals
}

// waitTotal waits until a followed page shows want payments.
func waitTotal(t *testing.T, totals <-chan int64, want int64) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case got := <-totals:
			if got == want {
				return
			}
		case <-deadline:
			t.Fatalf("the page never showed %d payments", want)
		}
	}
}

// via is the server as seen through a reverse proxy at the loopback
// address proxy, which sends X-Forwarded-For: xff.
func (s *testServer) via(tb testing.TB, proxy, xff string) *testServer {
	tb.Helper()
	o := s.from(tb, proxy)
	next := o.client.Transport
	c := *o.client
	c.Transport = roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("X-Forwarded-For", xff)
		return next.RoundTrip(r)
	})
	o.client = &c
	return o
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustProxies(tb testing.TB, s string) web.Proxies {
	tb.Helper()
	p, err := web.ParseProxies(s)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// cutClock is the real clock, whose long timers (a slow server's work)
// the test cuts short when it ends: its server does not make it wait for
// work that runs to the end, as a real server's does.
type cutClock struct {
	clock.Clock
	mu     sync.Mutex
	long   map[*time.Timer]chan time.Time
	cutOff bool
}

// newCutClock returns a cutClock; cut it before its server stops.
func newCutClock() *cutClock {
	return &cutClock{Clock: clock.Real(), long: map[*time.Timer]chan time.Time{}}
}

// cutTimer is a long timer of a cutClock.
type cutTimer struct {
	c  *cutClock
	t  *time.Timer
	ch chan time.Time
}

func (t cutTimer) C() <-chan time.Time { return t.ch }
func (t cutTimer) Stop() bool {
	t.c.mu.Lock()
	delete(t.c.long, t.t)
	t.c.mu.Unlock()
	return t.t.Stop()
}

// NewTimer is the real clock's, unless it is long (5 s or more): then it
// also fires when the test ends.
func (c *cutClock) NewTimer(d time.Duration) clock.Timer {
	if d < 5*time.Second {
		return c.Clock.NewTimer(d)
	}
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cutOff {
		ch <- time.Now()
		return cutTimer{c, time.NewTimer(time.Hour), ch}
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		c.mu.Lock()
		delete(c.long, t)
		c.mu.Unlock()
		ch <- time.Now()
	})
	c.long[t] = ch
	return cutTimer{c, t, ch}
}

// cut fires every long timer now, and every one made from now on.
func (c *cutClock) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cutOff = true
	for t, ch := range c.long {
		if t.Stop() {
			ch <- time.Now()
		}
	}
	c.long = map[*time.Timer]chan time.Time{}
}
