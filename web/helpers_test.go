package web_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"idemlab/sim/clock"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/sim/lesson"
	"idemlab/sim/pgtest"
	"idemlab/sim/store"
	"idemlab/views"
	"idemlab/web"
)

// testServer is the real lab over real HTTP: an httptest server in front of
// the house's rooms on a real SQLite database.
type testServer struct {
	tb     testing.TB
	URL    string
	House  *house.House
	Store  *store.Store
	client *http.Client
	Stop   func() // stops the lab now (it stops at cleanup anyway)
}

type serverOpts struct {
	db    string       // database path; default :memory:
	clock clock.Clock  // default the real one
	addr  string       // listen address; default any free port
	cfg   house.Config // the house's limits and parts (Store, Clock, BaseURL are set here)
	web   web.Options  // the server's limits
}

// startServer starts the lab and stops it when the test ends.
func startServer(tb testing.TB, opts ...func(*serverOpts)) *testServer {
	tb.Helper()
	o := serverOpts{db: ":memory:"}
	if os.Getenv("IDEMLAB_TEST_STORE") == "postgres" { // the suite again, on PostgreSQL
		withPostgres(tb)(&o)
	}
	for _, f := range opts {
		f(&o)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, o.db)
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	ts := httptest.NewUnstartedServer(nil)
	if o.addr != "" {
		ts.Listener.Close()
		ts.Listener = listen(tb, o.addr)
	}
	transport := &http.Transport{MaxIdleConnsPerHost: 64}
	cfg := o.cfg
	cfg.Store, cfg.Clock, cfg.Notify.Email = db, o.clock, views.Email
	cfg.Client.BaseURL, cfg.Client.Transport = "http://"+ts.Listener.Addr().String(), transport
	logger := slog.New(slog.DiscardHandler)
	if os.Getenv("IDEMLAB_TEST_LOG") != "" { // the server's log, to see a 500's cause
		logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cfg.Logger = logger
	h, err := house.Open(ctx, cfg)
	if err != nil {
		tb.Fatalf("open the house: %v", err)
	}
	handler := web.NewServer(h, logger, o.web)
	ts.Config.Handler = handler
	ts.Start()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			h.Stop()
			handler.Close()
			ts.CloseClientConnections()
			ts.Close()
			h.Close()
			transport.CloseIdleConnections()
			db.Close()
		})
	}
	tb.Cleanup(stop)
	return &testServer{tb: tb, URL: ts.URL, House: h, Store: db, Stop: stop,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// listen listens on addr, waiting a moment for a port another server of
// the test has just let go.
func listen(tb testing.TB, addr string) net.Listener {
	tb.Helper()
	for i := 0; ; i++ {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln
		}
		if i == 50 {
			tb.Fatalf("listen on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// poll polls cond until it holds, or until timeout: the tests' one way
// to wait for something the lab does in its own time.
func poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// waitFor polls cond until it holds, failing the test if it still does not
// after timeout; what names what the test waits for.
func waitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !poll(timeout, cond) {
		tb.Fatalf("after %v still waiting for %s", timeout, what)
	}
}

func withDB(path string) func(*serverOpts)      { return func(o *serverOpts) { o.db = path } }
func withClock(c clock.Clock) func(*serverOpts) { return func(o *serverOpts) { o.clock = c } }
func withAddr(addr string) func(*serverOpts)    { return func(o *serverOpts) { o.addr = addr } }
func withLimits(cfg labs.Config, w web.Options) func(*serverOpts) {
	return func(o *serverOpts) { o.cfg.Labs, o.web = cfg, w }
}

// withParts runs the lab with its broker and its mailbox: both embedded,
// or the broker at $IDEMLAB_TEST_NATS when that is set (CI starts a real
// nats-server for it).
func withParts() func(*serverOpts) {
	return func(o *serverOpts) {
		o.cfg.Notify.WithQueue, o.cfg.Notify.WithMailbox, o.cfg.KV = true, true, true
		o.cfg.Notify.NATS = os.Getenv("IDEMLAB_TEST_NATS")
		o.cfg.Redis = os.Getenv("IDEMLAB_TEST_REDIS")
	}
}

// withRealRedis runs the lab against the real redis-server at
// $IDEMLAB_TEST_REDIS; without it the test skips, or fails under CI=true.
func withRealRedis(tb testing.TB) func(*serverOpts) {
	tb.Helper()
	url := realServer(tb, "IDEMLAB_TEST_REDIS", "redis-server", "redis://127.0.0.1:PORT/0")
	return func(o *serverOpts) { o.cfg.KV, o.cfg.Redis = true, url }
}

// realServer is the address of the real server that $env names; without
// it the test skips, or fails under CI=true (.ci/run starts one).
func realServer(tb testing.TB, env, name, example string) string {
	tb.Helper()
	url := os.Getenv(env)
	if url == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is not set: CI must start a %s for this test (.ci/run)", env, name)
		}
		tb.Skipf("no real %s: set %s=%s to run this test against one", name, env, example)
	}
	return url
}

// withPostgres runs the lab on a database of its own in the PostgreSQL at
// $IDEMLAB_TEST_POSTGRES (dropped when the test ends); without it the test
// skips, or fails under CI=true.
func withPostgres(tb testing.TB) func(*serverOpts) {
	tb.Helper()
	db := pgtest.Database(tb)
	return func(o *serverOpts) { o.db = db }
}

// withRealNATS runs the lab against the real nats-server at
// $IDEMLAB_TEST_NATS; without it the test skips, or fails under CI=true.
func withRealNATS(tb testing.TB) func(*serverOpts) {
	tb.Helper()
	url := realServer(tb, "IDEMLAB_TEST_NATS", "nats-server", "nats://127.0.0.1:PORT")
	return func(o *serverOpts) {
		o.cfg.Notify.WithQueue, o.cfg.Notify.WithMailbox, o.cfg.Notify.NATS = true, true, url
	}
}

// fakeClock is a clock whose time the test moves by hand, and whose timers
// are the real clock's: the lab's time stands still between the test's
// moves, while its waits (timeouts, backoffs) take their real time.
type fakeClock struct {
	clock.Clock // the real one, for the timers
	mu          sync.Mutex
	t           time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{Clock: clock.Real(), t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// lessons are the lessons the server can set up: those that need
// PostgreSQL only when it runs on it.
func (s *testServer) lessons() []lesson.Lesson { return lessonsOn(s.Store.Postgres()) }

// stormy reports whether the lesson runs storms: its ledger is theirs, not
// the article's numbers, and a scenario's link does not run them again.
func stormy(ls lesson.Lesson) bool { return ls.Expect.Storms != nil }

// stormLessons are the storm lessons of all, in order. They play in tests
// that run apart, before the parallel ones (TestStormLessonsApart): their
// herd of hundreds of simulated clients, answered late on two cores shared
// with the parallel tests, spreads out (61 retries at the peak against
// jitter's 22, seen in CI), and the lesson ends "not as in the article".
// A test meant to play them fails when there are none.
func stormLessons(t *testing.T, all []lesson.Lesson) []lesson.Lesson {
	t.Helper()
	storms := slices.DeleteFunc(slices.Clone(all), func(ls lesson.Lesson) bool { return !stormy(ls) })
	if len(storms) == 0 {
		t.Fatal("no storm lesson")
	}
	return storms
}

// lessonsOn are the lessons a server on PostgreSQL (or not) can set up.
func lessonsOn(postgres bool) []lesson.Lesson {
	var out []lesson.Lesson
	for _, ls := range lesson.All() {
		if !ls.Postgres || postgres {
			out = append(out, ls)
		}
	}
	return out
}
