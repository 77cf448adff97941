package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	childEnv = "IDEMLAB_BENCH_CHILD" // "lab" or "noop": this process is a child of BenchmarkLoad or TestSoak
	faultEnv = "IDEMLAB_FAULT"       // where the lab child kills itself (childHooks), for TestCrash…
	// labIdleEnv is the lab child's idle time, shorter than -lab-idle
	// takes: TestSoak's labs idle out in seconds.
	labIdleEnv = "IDEMLAB_CHILD_LAB_IDLE"
	// leaseEnv is the lab child's lease on a PostgreSQL database, shorter
	// than a real one: the membership tests see a death in a second or two.
	leaseEnv = "IDEMLAB_CHILD_LEASE"
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
		hk := childHooks(os.Getenv(faultEnv))
		hk.labIdle, _ = time.ParseDuration(os.Getenv(labIdleEnv))
		hk.lease, _ = time.ParseDuration(os.Getenv(leaseEnv))
		err = serve(ctx, append([]string{"idemlab"}, args...), func(string) string { return "" }, os.Stdout, hk)
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
// (SIGKILL, nothing flushed, as a crash does), for the crash tests.
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
	return startChildWith(tb, nil, mode, args...)
}

// startChildWith is startChild with variables (KEY=value) added to the
// child's environment: a parallel test cannot t.Setenv, and its children
// are its own.
func startChildWith(tb testing.TB, env []string, mode string, args ...string) *child {
	tb.Helper()
	c, err := launchWith(tb, env, mode, args...)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// launch is startChild that returns its failure, for restarts that may
// find their port not yet free.
func launch(tb testing.TB, mode string, args ...string) (*child, error) {
	return launchWith(tb, nil, mode, args...)
}

// launchWith is launch with variables added to the child's environment.
func launchWith(tb testing.TB, env []string, mode string, args ...string) (*child, error) {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestBenchChild$", "--"}, args...)...)
	cmd.Env = append(append(os.Environ(), childEnv+"="+mode), env...)
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
