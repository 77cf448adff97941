package main

// BenchmarkLoad drives the lab as a client program does: the lab runs in a
// process of its own (this test binary run again as a child, see
// TestBenchChild) and 16 keep-alive clients send it requests over loopback.
// Two floors are measured in the same run, so the figures that matter are
// ratios, not absolute times (the machine is small and shared): see
// docs/load.md. Nothing here asserts anything about time.
//
//	go test -run '^$' -bench Load -benchtime 3s .
//
// IDEMLAB_PROFILE=/tmp/cpu.pprof saves a CPU profile of the lab child under
// the charge load (IDEMLAB_PROFILE_SECONDS long, 10 by default; under the
// replays' load with IDEMLAB_PROFILE_KIND=replays);
// IDEMLAB_DEBUG_ADDR=127.0.0.1:6060 gives the child's -debug endpoints a
// fixed address, to profile it by hand while the benchmark runs.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"idemlab/sim"
)

const (
	childEnv    = "IDEMLAB_BENCH_CHILD" // "lab" or "noop": this process is a child of BenchmarkLoad or TestSoak
	profileEnv  = "IDEMLAB_PROFILE"     // save a CPU profile of the lab under the charge load to this file
	debugEnv    = "IDEMLAB_DEBUG_ADDR"  // the lab child's -debug address; a free loopback port by default
	faultEnv    = "IDEMLAB_FAULT"       // where the lab child kills itself (childHooks), for TestCrash…
	loadClients = 16                    // concurrent clients of every load benchmark
)

// TestBenchChild is not a test: it is the body of the child processes that
// BenchmarkLoad and TestSoak start, the test binary run again with
// IDEMLAB_BENCH_CHILD set. "lab" runs the program (run) with the arguments
// after "--"; "noop" runs a net/http server that answers 200 {} to
// everything, the floor of an HTTP answer. A child stops gracefully on
// SIGTERM or when its standard input closes, which also happens when its
// parent dies: no child outlives the benchmark.
func TestBenchChild(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("runs only as a child process of BenchmarkLoad or TestSoak")
	}
	os.Exit(childMain(mode, flag.Args()))
}

func childMain(mode string, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	var err error
	switch mode {
	case "lab":
		err = serve(ctx, append([]string{"idemlab"}, args...), func(string) string { return "" }, os.Stdout, childHooks(os.Getenv(faultEnv)))
	case "noop":
		err = serveNoop(ctx, os.Stdout)
	default:
		err = fmt.Errorf("unknown %s=%q", childEnv, mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// faultConsumerOutbox is the moment between the consumer's commit (its
// memory of the message and the email's outbox row) and its ack.
const faultConsumerOutbox = "consumer-outbox"

// childHooks are the lab child's fault points: where it kills itself
// (SIGKILL, nothing flushed, as a crash does) for the crash tests.
func childHooks(fault string) hooks {
	if fault != faultConsumerOutbox {
		return hooks{}
	}
	return hooks{afterConsumerCommit: func() {
		p, _ := os.FindProcess(os.Getpid())
		p.Kill()
		select {} // the signal takes a moment: never go past the point
	}}
}

// serveNoop serves the floor: it reads the request and answers 200 {}.
func serveNoop(ctx context.Context, stdout io.Writer) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header()["Content-Type"] = []string{"application/json"}
		w.Write([]byte("{}\n"))
	})}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Fprintf(stdout, "msg=\"noop listening\" url=http://%s/\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// child is a child process: the lab or the no-op server.
type child struct {
	URL   string // http://127.0.0.1:PORT, where it serves
	Debug string // http://127.0.0.1:PORT of its -debug endpoints, when given -debug
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *childLog
	done  chan struct{} // closed when the process has exited
	once  sync.Once
}

var (
	labListening   = regexp.MustCompile(`lab listening" url=(http://[^/\s]+)/`)
	noopListening  = regexp.MustCompile(`noop listening" url=(http://[^/\s]+)/`)
	debugListening = regexp.MustCompile(`debug endpoints listening" url=(http://[^/\s]+)/`)
)

// startChild starts a child and waits until it serves; it is stopped when
// the test or benchmark ends.
func startChild(tb testing.TB, mode string, args ...string) *child {
	tb.Helper()
	c, err := launch(tb, mode, args...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// launch is startChild that returns its failure, for restarts that may
// find their port not yet free.
func launch(tb testing.TB, mode string, args ...string) (*child, error) {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestBenchChild$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	cmd.Dir = tb.TempDir() // what a child keeps in its working directory (the broker's store on PostgreSQL) stays its own
	out := &childLog{}
	cmd.Stdout, cmd.Stderr = out, out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s child: %w", mode, err)
	}
	c := &child{cmd: cmd, stdin: stdin, out: out, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(c.done)
	}()
	tb.Cleanup(c.stop)
	wait := []*regexp.Regexp{labListening}
	if mode == "noop" {
		wait[0] = noopListening
	}
	if slices.Contains(args, "-debug") {
		wait = append(wait, debugListening)
	}
	found := make([]string, len(wait))
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; i < len(wait); {
		if m := wait[i].FindStringSubmatch(out.String()); m != nil {
			found[i] = m[1]
			i++
			continue
		}
		select {
		case <-c.done:
			return nil, fmt.Errorf("the %s child ended before it served:\n%s", mode, out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("the %s child did not say where it serves:\n%s", mode, out.String())
		}
	}
	c.URL = found[0]
	if len(found) > 1 {
		c.Debug = found[1]
	}
	return c, nil
}

// stop asks the child to shut down gracefully and waits; a child that does
// not end within 20 s is killed.
func (c *child) stop() {
	c.once.Do(func() { c.stdin.Close() })
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		c.kill()
	}
}

// kill ends the child at once, as kill -9 does, and waits for it.
func (c *child) kill() {
	c.cmd.Process.Kill()
	<-c.done
	c.once.Do(func() { c.stdin.Close() })
}

// childLog keeps what a child writes (its first 4 MiB).
type childLog struct {
	mu sync.Mutex
	b  []byte
}

func (l *childLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := 4<<20 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *childLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// answer is one HTTP answer, read whole, or the error that took its place.
type answer struct {
	status int
	header http.Header
	body   []byte
	err    error
}

// send sends one request; headers are pairs of canonical name and value.
func send(ctx context.Context, c *http.Client, method, url string, body []byte, headers ...string) answer {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return answer{err: err}
	}
	if body != nil {
		req.Header["Content-Type"] = []string{"application/json"}
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header[headers[i]] = []string{headers[i+1]}
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{err: err}
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return answer{status: resp.StatusCode, header: resp.Header, body: b, err: err}
}

// limited reports whether a is one of the refusals SPEC allows a loaded
// server (429, or 503, each with Retry-After) and how long it asks to wait.
// A 503 without Retry-After is not one of them.
func limited(a answer) (time.Duration, bool) {
	if a.err != nil || a.status != http.StatusTooManyRequests && a.status != http.StatusServiceUnavailable {
		return 0, false
	}
	v := a.header.Get("Retry-After")
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t)), true
	}
	return 0, false
}

// sendHonouring is send that, when refused with Retry-After, waits as asked
// (at most 5 s) and sends again, up to 5 times; refusals counts each one.
func sendHonouring(c *http.Client, refusals *atomic.Int64, method, url string, body []byte, headers ...string) answer {
	for i := 0; ; i++ {
		a := send(context.Background(), c, method, url, body, headers...)
		d, ok := limited(a)
		if !ok || i == 4 {
			return a
		}
		refusals.Add(1)
		time.Sleep(min(d, 5*time.Second))
	}
}

// newClients returns n HTTP clients, each with its own keep-alive
// connection, as n separate programs would have.
func newClients(n int) []*http.Client {
	cs := make([]*http.Client, n)
	for i := range cs {
		cs[i] = &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1,
			IdleConnTimeout: time.Minute, DisableCompression: true}}
	}
	return cs
}

func closeClients(cs []*http.Client) {
	for _, c := range cs {
		c.CloseIdleConnections()
	}
}

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

// BenchmarkLoad measures, at 16 concurrent clients: floor-insert, a bare
// single-row SQLite insert transaction on a file database opened as the lab
// opens its own; floor-noop, a request to a no-op net/http server in a
// process of its own; charges, new charges (a fresh Idempotency-Key each)
// under replay to the lab in its own process, on a file database; replays,
// the same key again. charges and replays report their rate as a ratio to
// the floor measured just before them (targets: 0.40 and 0.60) and count
// every wrong answer in "errors" (must be 0). interleaved runs the four in
// turn, 100 ms each, round after round, so that the machine's drift hits
// all four alike, and reports the same ratios from its totals.
func BenchmarkLoad(b *testing.B) {
	l := newLoad(b)
	if path := os.Getenv(profileEnv); path != "" {
		profileCharges(b, l, path)
	}
	var insertRate, noopRate float64
	b.Run("floor-insert", func(b *testing.B) {
		insertRate = l.bench(b, false, l.insert, "inserts/s")
	})
	b.Run("floor-noop", func(b *testing.B) {
		noopRate = l.bench(b, true, l.noopRequest, "req/s")
	})
	b.Run("charges", func(b *testing.B) {
		if rate := l.bench(b, true, l.charge, "charges/s"); insertRate > 0 {
			b.ReportMetric(rate/insertRate, "of-insert")
		}
	})
	b.Run("replays", func(b *testing.B) {
		if rate := l.bench(b, true, l.replay, "replays/s"); noopRate > 0 {
			b.ReportMetric(rate/noopRate, "of-noop")
		}
	})
	b.Run("interleaved", l.interleaved)
}

// load is BenchmarkLoad's setting: the two children, a lab under replay in
// the lab child, the bare database, and what each kind of request is.
type load struct {
	lab, noop *child
	api       string // the lab's API prefix, with its URL
	db        *sql.DB
	seq       atomic.Int64 // every new charge's key and order are unique across runs
	refusals  atomic.Int64
	replayed  []byte // the answer every replay must repeat
}

func newLoad(b *testing.B) *load {
	dir := b.TempDir()
	debug := os.Getenv(debugEnv)
	if debug == "" {
		debug = "127.0.0.1:0"
	}
	l := &load{lab: startChild(b, "lab", "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "lab.db"), "-debug", debug),
		noop: startChild(b, "noop"), db: bareDB(b, filepath.Join(dir, "bare.db"))}
	b.Logf("lab child at %s, its pprof at %s/debug/pprof/", l.lab.URL, l.lab.Debug)
	setup := &http.Client{Transport: &http.Transport{}}
	defer setup.CloseIdleConnections()
	created := sendHonouring(setup, &l.refusals, "POST", l.lab.URL+"/api/v1/labs", nil)
	id, ok := labID(created)
	if !ok {
		b.Fatalf("create lab: %d %v %s", created.status, created.err, created.body)
	}
	l.api = l.lab.URL + "/api/v1/labs/" + id
	if a := send(context.Background(), setup, "PATCH", l.api+"/settings", []byte(`{"protection":"replay"}`)); a.status != http.StatusOK {
		b.Fatalf("settings: %d %v %s", a.status, a.err, a.body)
	}
	first := sendHonouring(setup, &l.refusals, "POST", l.api+"/charges", []byte(replayBody), "Idempotency-Key", "load-replayed")
	if first.status != http.StatusCreated {
		b.Fatalf("the charge to replay: %d %v %s", first.status, first.err, first.body)
	}
	l.replayed = first.body
	return l
}

// replayBody is the body of the charge that every replay repeats.
const replayBody = `{"order_id":"order-replayed","amount":100}`

func (l *load) insert(_ *http.Client, i int) error {
	tx, err := l.db.Begin()
	if err != nil {
		return err
	}
	n := strconv.Itoa(i)
	if _, err := tx.Exec(`INSERT INTO payments (lab_id, order_id, amount, idempotency_key, dedup_key, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		"bench", "order-"+n, 100, "key-"+n, nil, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// noopRequest is a replay's request, sent to the no-op server.
func (l *load) noopRequest(c *http.Client, _ int) error {
	a := send(context.Background(), c, "POST", l.noop.URL+"/", []byte(replayBody), "Idempotency-Key", "load-replayed")
	if a.err != nil || a.status != http.StatusOK {
		return fmt.Errorf("no-op: %d %v", a.status, a.err)
	}
	return nil
}

func (l *load) charge(c *http.Client, i int) error {
	n := strconv.Itoa(i)
	a := sendHonouring(c, &l.refusals, "POST", l.api+"/charges", sim.Charge{OrderID: "order-" + n, Amount: 100}.Body(), "Idempotency-Key", "load-"+n)
	switch {
	case a.err != nil:
		return a.err
	case a.status != http.StatusCreated || a.header.Get("Idempotent-Replayed") != "":
		return fmt.Errorf("new charge %s: %d (replayed %q) %.200s", n, a.status, a.header.Get("Idempotent-Replayed"), a.body)
	}
	return nil
}

func (l *load) replay(c *http.Client, _ int) error {
	a := sendHonouring(c, &l.refusals, "POST", l.api+"/charges", []byte(replayBody), "Idempotency-Key", "load-replayed")
	switch {
	case a.err != nil:
		return a.err
	case a.status != http.StatusCreated || a.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(a.body, l.replayed):
		return fmt.Errorf("replay: %d (replayed %q) %.200s, want 201 replayed %s", a.status, a.header.Get("Idempotent-Replayed"), a.body, l.replayed)
	}
	return nil
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
	b.ResetTimer()
	t := drive(loadClients, count(b.N, &l.seq), func(w, i int) error { return req(clients[w], i) })
	b.StopTimer()
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

// labID reads the id of a lab the API created.
func labID(a answer) (string, bool) {
	if a.err != nil || a.status != http.StatusCreated {
		return "", false
	}
	_, rest, ok := strings.Cut(string(a.body), `"id":"`)
	id, _, _ := strings.Cut(rest, `"`)
	return id, ok && id != ""
}

// bareDB is a file database with a plain payments table (the ledger's
// columns, its UNIQUE constraint and index; no triggers, no foreign key),
// opened as the lab opens its writer (sim/store.go: WAL, synchronous=NORMAL,
// busy_timeout, immediate transactions, one connection).
func bareDB(b *testing.B, path string) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS payments (
    id INTEGER PRIMARY KEY, lab_id TEXT NOT NULL, order_id TEXT NOT NULL, amount INTEGER NOT NULL CHECK (amount > 0),
    idempotency_key TEXT, dedup_key TEXT, created_at TEXT NOT NULL, UNIQUE (lab_id, dedup_key));
CREATE INDEX IF NOT EXISTS payments_lab_key ON payments (lab_id, idempotency_key)`); err != nil {
		b.Fatal(err)
	}
	return db
}

// profileCharges saves a CPU profile of the lab child, taken through its
// -debug endpoint while 16 clients send it new charges.
func profileCharges(b *testing.B, l *load, path string) {
	seconds := 10
	if s, err := strconv.Atoi(os.Getenv("IDEMLAB_PROFILE_SECONDS")); err == nil && s > 0 {
		seconds = s
	}
	clients := newClients(loadClients)
	defer closeClients(clients)
	profiled := make(chan answer, 1)
	var over atomic.Bool
	go func() {
		pc := &http.Client{Transport: &http.Transport{}, Timeout: time.Duration(seconds+60) * time.Second}
		defer pc.CloseIdleConnections()
		profiled <- send(context.Background(), pc, "GET", fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", l.lab.Debug, seconds), nil)
		over.Store(true)
	}()
	req := l.charge
	if os.Getenv("IDEMLAB_PROFILE_KIND") == "replays" { // the replays' profile instead
		req = l.replay
	}
	t := drive(loadClients, func() (int, bool) { return int(l.seq.Add(1)), !over.Load() }, func(w, i int) error { return req(clients[w], i) })
	prof := <-profiled
	if prof.err != nil || prof.status != http.StatusOK {
		b.Fatalf("CPU profile: %d %v %s", prof.status, prof.err, prof.body)
	}
	if err := os.WriteFile(path, prof.body, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("CPU profile of the lab under %d charges from %d clients (%d errors): go tool pprof -top %s", len(t.latency), loadClients, t.errors, path)
}
