package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"idemlab/sim/logtest"
)

// A -redis and a -nats that do not answer at start do not stop the lab: it
// starts, says so once for each, naming the flag (and none of go-redis's
// own lines), answers set-nx with 503 naming Redis, and takes both up as
// soon as they answer, with no restart.
func TestStartsWithItsPartsDown(t *testing.T) {
	t.Parallel()
	redisBin, natsBin := lookPath(t, "redis-server"), lookPath(t, "nats-server")
	rport, nport := freePort(t), freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	out := &logtest.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"idemlab", "-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "lab.db"),
			"-redis", "redis://127.0.0.1:" + rport + "/0", "-nats", "nats://127.0.0.1:" + nport}, func(string) string { return "" }, out)
	}()
	ended := false
	defer func() {
		cancel()
		if err := <-done; !ended && err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	var base string
	within(t, "the lab to listen", func() bool {
		select {
		case err := <-done:
			ended, done = true, make(chan error, 1)
			done <- nil
			t.Fatalf("run ended: %v\n%s", err, out.String())
		default:
		}
		m := listening.FindStringSubmatch(out.String())
		if m != nil {
			base = m[1]
		}
		return m != nil
	})
	for _, want := range []string{"redis does not answer", "broker does not answer"} {
		if n := strings.Count(out.String(), want); n != 1 {
			t.Errorf("%q said %d times; want once:\n%s", want, n, out.String())
		}
	}
	if !strings.Contains(out.String(), "flag=-redis") || !strings.Contains(out.String(), "flag=-nats") {
		t.Errorf("the log does not name the flags:\n%s", out.String())
	}
	call(t, "PATCH", base+"/api/v1/labs/demo/settings", `{"protection":"set-nx"}`)
	code, h, body := call(t, "POST", base+"/api/v1/labs/demo/charges", `{"order_id":"order-1","amount":100}`, "Idempotency-Key", "k-1")
	if code != 503 || h.Get("Retry-After") == "" || !strings.Contains(body, "/problems/redis-unavailable") {
		t.Errorf("set-nx with Redis down: %d (Retry-After %q) %s; want 503 naming Redis", code, h.Get("Retry-After"), body)
	}
	if code, _, body := call(t, "GET", base+"/healthz", ""); code != 503 || !strings.Contains(body, `"kv":"down"`) || !strings.Contains(body, `"broker":"down"`) {
		t.Errorf("/healthz: %d %s; want 503 naming kv and broker", code, body)
	}

	runServer(t, redisBin, "--port", rport, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	runServer(t, natsBin, "-js", "-a", "127.0.0.1", "-p", nport, "-sd", t.TempDir())
	within(t, "a charge once Redis answers", func() bool {
		code, _, _ := call(t, "POST", base+"/api/v1/labs/demo/charges", `{"order_id":"order-1","amount":100}`, "Idempotency-Key", "k-1")
		return code == 201
	})
	within(t, "/healthz 200", func() bool { code, _, _ := call(t, "GET", base+"/healthz", ""); return code == 200 })
	for _, want := range []string{"redis answers again", "broker answers again"} {
		// The broker's comes from the NATS client's connect handler, which
		// runs on a goroutine of its own, maybe just after it reports healthy.
		within(t, "the log to say "+want, func() bool { return strings.Contains(out.String(), want) })
	}
	if strings.Contains(out.String(), "redis: ") {
		t.Errorf("go-redis's own lines in the log:\n%s", out.String())
	}
}

func lookPath(t *testing.T, name string) string {
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed: CI must install it (.ci/run)", name)
		}
		t.Skipf("no %s here", name)
	}
	return bin
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// runServer runs a server of the test's own until the test ends.
func runServer(t *testing.T, bin string, args ...string) {
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
}

// within fails the test unless cond holds within 15 s.
func within(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !waitUntil(15*time.Second, cond) {
		t.Fatalf("after 15 s still waiting for %s", what)
	}
}
