package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/web"
)

// The tests of "Fair shares" (SPEC.md): no single client address can take
// the room; a second address keeps working while the first hits every cap.

// One address opens 1,000 live streams, fills the in-flight cap with slow
// races and runs comparisons until refused: each is refused at its share
// with 429, while a second address's page receives its live updates and
// its charges succeed. The same behind a proxy listed in -trust-proxy, the
// two clients told apart by the X-Forwarded-For it sends.
func TestOneAddressCannotTakeTheRoom(t *testing.T) {
	t.Parallel()
	t.Run("direct", func(t *testing.T) {
		clk := newCutClock()
		defer clk.cut()
		s := startServer(t, withClock(clk), withLimits(labs.Config{}, web.Options{CompareRate: oneCompare}))
		takeTheRoom(t, s, s.from(t, "127.0.0.2"), s.from(t, "127.0.0.3"))
	})
	t.Run("behind a proxy", func(t *testing.T) {
		clk := newCutClock()
		defer clk.cut()
		s := startServer(t, withClock(clk), withLimits(labs.Config{}, web.Options{TrustProxy: mustProxies(t, "127.0.0.4/32"), CompareRate: oneCompare}))
		// the first client forged a hop of its own: the right-most one the
		// proxy did not write is the client
		takeTheRoom(t, s, s.via(t, "127.0.0.4", "198.18.0.1, 203.0.113.7"), s.via(t, "127.0.0.4", "198.51.100.8"))
	})
}

// oneCompare lets an address run one comparison, then refuses it: the
// refusal is what the test looks at, and each comparison plays 39 labs.
var oneCompare = web.Rate{Every: time.Minute, Burst: 1}

// takeTheRoom is the test of TestOneAddressCannotTakeTheRoom, a and b the
// server as two client addresses see it.
func takeTheRoom(t *testing.T, s, a, b *testServer) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// 1,000 streams: a quarter of the server's are a's, the rest refused.
	opened, refused := a.openStreams(ctx, "/labs/demo/events", 1000)
	if want := web.DefaultMaxStreams / 4; opened != want {
		t.Errorf("one address opened %d live streams, want %d (a quarter of -max-streams)", opened, want)
	}
	for status, r := range refused {
		if status != http.StatusTooManyRequests {
			t.Errorf("a stream past the share: %d %s, want 429", status, r.Body)
		}
	}
	wantShare(t, refused[http.StatusTooManyRequests], "streams-per-address")

	// Slow races in four labs: two of 64 fill a's share, the rest are refused.
	var races []response
	for range 4 {
		lab := a.newLab(`{"protection":"unique","key_strategy":"uuid","server_delay_ms":30000,"client_timeout_ms":100}`)
		a.operation(lab, `{"order_id":"order-1","amount":100,"fate":"request-lost"}`)
		for range 2 {
			races = append(races, a.do("POST", lab+"/operations/latest/race", `{"parallel":64}`))
		}
	}
	ran := 0
	for _, r := range races {
		if r.Status == http.StatusOK {
			ran++
			continue
		}
		wantShare(t, r, "inflight-per-address")
	}
	if ran != 2 {
		t.Errorf("%d races of 64 ran from one address, want 2 (a quarter of -max-inflight)", ran)
	}
	if got := s.House.Labs.Limits().InFlight(); got != 2*sim.MaxRace {
		t.Errorf("%d requests in flight, want %d: a's share", got, 2*sim.MaxRace)
	}

	// Comparisons until refused: a 429 of a's, never the server's 503.
	for i := 0; ; i++ {
		r := a.do("POST", "/api/v1/compare", "")
		if r.Status == http.StatusOK && i < 10 {
			continue
		}
		if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
			t.Errorf("comparison %d: %d %s; want 429 with Retry-After", i+1, r.Status, r.Body)
		}
		break
	}

	// b's page follows its lab live, and its charges go through.
	lab := b.newLab("")
	totals := b.follow(ctx, "/labs/"+labID(lab)+"/events")
	if got := <-totals; got != 0 {
		t.Fatalf("b's page starts with %d payments, want 0", got)
	}
	for i := range 3 {
		op := b.operation(lab, `{"order_id":"order-`+itoa(i)+`","amount":100}`)
		if n := len(op.Attempts); n != 1 || op.Attempts[0].Status != http.StatusCreated {
			t.Fatalf("b's charge: %+v, want one attempt answered 201", op.Attempts)
		}
		waitTotal(t, totals, int64(i+1))
	}
	if got := s.House.Labs.Limits().InFlight(); got < 2*sim.MaxRace {
		t.Errorf("%d requests in flight when b was done: a's slow races were not holding their share all along", got)
	}
}

// wantShare checks a 429 of the named share of one address, with
// Retry-After.
func wantShare(t *testing.T, r response, limit string) {
	t.Helper()
	if r.Status == 0 {
		t.Errorf("nothing was refused; want 429 %s", limit)
		return
	}
	if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
		t.Errorf("refused with %d (Retry-After %q): %s; want 429 with Retry-After", r.Status, r.Header.Get("Retry-After"), r.Body)
		return
	}
	if got := r.JSON(t)["limit"]; got != limit {
		t.Errorf("limit %v, want %s", got, limit)
	}
}

// One client address holds a bounded number of labs (a quarter of
// -max-labs), made by the page, the API or a scenario link, counted over
// those that still exist; a comparison's labs are not counted; another
// address has its own.
func TestLabsPerAddress(t *testing.T) {
	t.Parallel()
	s := startServer(t, withLimits(labs.Config{MaxLabs: 100}, web.Options{}))
	a, b := s.from(t, "127.0.0.2"), s.from(t, "127.0.0.3")
	var mine []string
	for range 25 {
		mine = append(mine, a.newLab(""))
	}
	code := a.must(http.StatusOK, "GET", mine[0]+"/scenario", "").JSON(t)["code"].(string)
	wantShare(t, a.do("POST", "/api/v1/labs", ""), "labs-per-address")
	wantShare(t, a.do("POST", "/labs", "", formHeaders()...), "labs-per-address")
	wantShare(t, a.do("GET", "/s/"+code, ""), "labs-per-address")
	a.must(http.StatusOK, "POST", "/api/v1/compare", "")
	b.must(http.StatusCreated, "POST", "/api/v1/labs", "")
	b.must(http.StatusSeeOther, "GET", "/s/"+code, "")
	a.must(http.StatusNoContent, "DELETE", mine[0], "")
	a.must(http.StatusSeeOther, "GET", "/s/"+code, "")
	wantShare(t, a.do("POST", "/api/v1/labs", ""), "labs-per-address")
}
