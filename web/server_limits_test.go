package web_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"idemlab/sim/labs"
	"idemlab/web"
)

// The tests of "A lab among many" (SPEC.md): one person's lab, link or
// script never slows, breaks or exposes anyone else's.

// Simulated requests in flight are capped across the server: a race that
// would pass the cap is refused with 503 before anything of it is written.
func TestInFlightCap(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{MaxInFlight: 4}, web.Options{}))
	lab := s.newLab(`{"protection":"unique","key_strategy":"uuid"}`)
	s.operation(lab, `{"order_id":"order-1","amount":100,"fate":"request-lost"}`)
	before := s.must(http.StatusOK, "GET", lab+"/scenario", "").JSON(t)["actions"]
	r := s.do("POST", lab+"/operations/latest/race", `{"parallel":8}`)
	checkProblem(t, r, http.StatusServiceUnavailable, "/problems/server-busy", "")
	if r.Header.Get("Retry-After") == "" || !strings.Contains(string(r.Body), `"max-inflight"`) {
		t.Errorf("503 without Retry-After or the limit's name: %v %s", r.Header, r.Body)
	}
	if after := s.must(http.StatusOK, "GET", lab+"/scenario", "").JSON(t)["actions"]; after != before {
		t.Errorf("the refused race was recorded: actions %v → %v", before, after)
	}
	s.must(http.StatusOK, "POST", lab+"/operations/latest/race", `{"parallel":4}`)
	// (the racers give their slots back as their answers come home)
	if !poll(5*time.Second, func() bool { return s.House.Labs.Limits().InFlight() == 0 }) {
		t.Errorf("%d slots still taken after the race ended", s.House.Labs.Limits().InFlight())
	}
}

// Two hundred races at once with a slow server: the cap answers the excess
// with 503 and the rest run; no other 5xx, and every slot comes back.
func TestRaceStormIsCapped(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{MaxInFlight: 128}, web.Options{}))
	var labs []string
	for range 8 {
		lab := s.newLab(`{"protection":"unique","key_strategy":"uuid","server_delay_ms":300}`)
		s.operation(lab, `{"order_id":"order-1","amount":100,"fate":"request-lost"}`)
		labs = append(labs, lab)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		status = map[int]int{}
	)
	for i := range 200 {
		wg.Go(func() {
			r := s.do("POST", labs[i%len(labs)]+"/operations/latest/race", `{"parallel":64}`)
			mu.Lock()
			status[r.Status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	for code, n := range status {
		if code != http.StatusOK && code != http.StatusServiceUnavailable {
			t.Errorf("%d answers %d", n, code)
		}
	}
	if status[http.StatusOK] == 0 || status[http.StatusServiceUnavailable] == 0 {
		t.Errorf("answers %v: want some races run and some refused", status)
	}
	for _, lab := range labs {
		if l := s.ledger(lab); l.Count > 1 {
			t.Errorf("%s: %d payments under unique, want at most 1", lab, l.Count)
		}
	}
	// the last answers are on their way
	if !poll(5*time.Second, func() bool { return s.House.Labs.Limits().InFlight() == 0 }) {
		n := s.House.Labs.Limits().InFlight()
		t.Errorf("%d slots still taken", n)
	}
}

// Past -max-streams a new live stream is refused with 503 and Retry-After;
// closing one makes room. (Each from an address of its own: one address
// may hold a quarter of them.)
func TestMaxStreams(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{}, web.Options{MaxStreams: 2}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func(addr string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/labs/demo/events", nil)
		resp, err := s.from(t, addr).client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	a, b := open("127.0.0.2"), open("127.0.0.3")
	defer b.Body.Close()
	c := open("127.0.0.4")
	said, _ := io.ReadAll(c.Body)
	c.Body.Close()
	if c.StatusCode != http.StatusServiceUnavailable || c.Header.Get("Retry-After") == "" {
		t.Errorf("a third stream: %d (Retry-After %q), want 503 with Retry-After", c.StatusCode, c.Header.Get("Retry-After"))
	}
	// the problem says the limit in words, not a message key that missed
	if want := "as many live pages open as it may (2)"; !strings.Contains(string(said), want) || strings.Contains(string(said), "[err.") {
		t.Errorf("a third stream's problem: %s; want it to say %q", said, want)
	}
	a.Body.Close()
	status := 0
	if !poll(3*time.Second, func() bool {
		d := open("127.0.0.4")
		d.Body.Close()
		status = d.StatusCode
		return status == http.StatusOK
	}) {
		t.Fatalf("a closed stream did not make room: %d", status)
	}
}

// A page's htmx request refused at a server-wide limit gets a notice in the
// page's language, with 503 and Retry-After: htmx swaps error answers, so a
// problem's JSON would land in the page.
func TestBusyNoticeForThePage(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{MaxInFlight: 1}, web.Options{}))
	p, _ := openPage(t, s, `{"network":"duplicate"}`)
	resp, body := p.post(p.path+"/charge?lang=ru", url.Values{"order_id": {"order-1"}, "amount": {"100"}}, true)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if !strings.Contains(body, `id="charge-notice"`) || !strings.Contains(body, "имитируемых запросов в пути") || strings.Contains(body, `"type"`) {
		t.Errorf("the page got no Russian notice:\n%s", body)
	}
}

// /healthz says 503 when the ledger cannot be written.
func TestHealthTellsTheTruth(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	s.must(http.StatusOK, "GET", "/healthz", "")
	s.Store.Close() // nothing can be written now
	r := s.do("GET", "/healthz", "")
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("healthz with a closed ledger: %d %s", r.Status, r.Body)
	}
}
