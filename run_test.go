package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"idemlab/sim/logtest"
	"idemlab/sim/waittest"
)

// TestMain runs the package's tests four at a time, whatever the machine's
// cores: most of them wait on processes of their own (a restart, a lease
// running out, a kill).
func TestMain(m *testing.M) {
	waittest.Setup(4)
	goleak.VerifyTestMain(m)
}

var listening = regexp.MustCompile(`url=(http://\S+)/`)

// startLab runs the program as main does, on a free port, and returns its
// base URL and a function that stops it (as SIGTERM would) and returns run's
// error.
func startLab(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &logtest.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"idemlab", "-addr", "127.0.0.1:0"}, args...), func(string) string { return "" }, out)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := listening.FindStringSubmatch(out.String()); m != nil {
			stop := func() error {
				cancel()
				select {
				case err := <-done:
					return err
				case <-time.After(20 * time.Second):
					t.Fatal("run did not return after its context ended")
					return nil
				}
			}
			return m[1], stop
		}
		select {
		case err := <-done:
			t.Fatalf("run ended early: %v\n%s", err, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	t.Fatalf("the lab did not report its address:\n%s", out.String())
	return "", nil
}

func call(t *testing.T, method, url, body string, headers ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// A file-backed lab keeps its payments and its replays across a restart.
func TestRestartKeepsLedgerAndReplays(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lab.db")
	base, stop := startLab(t, "-db", db)
	if code, _, body := call(t, "GET", base+"/healthz", ""); code != 200 {
		t.Fatalf("healthz: %d %s", code, body)
	}
	call(t, "PATCH", base+"/api/v1/labs/demo/settings", `{"protection":"replay"}`)
	charge := `{"order_id":"order-7","amount":990}`
	code, _, first := call(t, "POST", base+"/api/v1/labs/demo/charges", charge, "Idempotency-Key", "k-restart")
	if code != 201 {
		t.Fatalf("charge: %d %s", code, first)
	}
	if err := stop(); err != nil {
		t.Fatalf("run returned %v after a clean shutdown", err)
	}

	base, stop = startLab(t, "-db", db)
	defer stop()
	code, h, again := call(t, "POST", base+"/api/v1/labs/demo/charges", charge, "Idempotency-Key", "k-restart")
	if code != 201 || again != first || h.Get("Idempotent-Replayed") != "true" {
		t.Errorf("after restart: %d %s (replayed %q), want 201 %s replayed", code, again, h.Get("Idempotent-Replayed"), first)
	}
	_, _, payments := call(t, "GET", base+"/api/v1/labs/demo/payments", "")
	if !strings.Contains(payments, `"count":1,`) || !strings.Contains(payments, `"total":990`) {
		t.Errorf("payments after restart: %s, want 1 payment of 990", payments)
	}
}

// Shutdown lets a request in flight finish: a slow charge started before
// the signal still commits and answers.
func TestShutdownFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	base, stop := startLab(t, "-db", ":memory:")
	// (under replay, so that the charge's claim shows it is at the server)
	call(t, "PATCH", base+"/api/v1/labs/demo/settings", `{"server_delay_ms":500,"protection":"replay"}`)
	type result struct {
		code int
		body string
	}
	res := make(chan result, 1)
	go func() {
		code, _, body := call(t, "POST", base+"/api/v1/labs/demo/charges", `{"order_id":"order-1","amount":100}`, "Idempotency-Key", "k-shutdown")
		res <- result{code, body}
	}()
	// the charge is at the server, working
	if !waitUntil(5*time.Second, func() bool {
		_, _, keys := call(t, "GET", base+"/api/v1/labs/demo/keys", "")
		return strings.Contains(keys, `"state":"in-flight"`)
	}) {
		t.Fatal("the charge never reached the server")
	}
	if err := stop(); err != nil {
		t.Errorf("run: %v", err)
	}
	if r := <-res; r.code != 201 {
		t.Errorf("in-flight charge during shutdown: %d %s, want 201", r.code, r.body)
	}
}

func TestFlagsAndDefaults(t *testing.T) {
	t.Parallel()
	out := &logtest.Buffer{}
	err := run(context.Background(), []string{"idemlab", "-no-such-flag"}, func(string) string { return "" }, out)
	if err == nil {
		t.Error("an unknown flag was accepted")
	}
	if !strings.Contains(out.String(), "-addr") || !strings.Contains(out.String(), "127.0.0.1:8080") {
		t.Errorf("usage does not show -addr and its loopback default:\n%s", out.String())
	}
}

// Open live streams end with the server: shutdown does not wait for them,
// and nothing is left running (TestMain checks for leaked goroutines).
func TestShutdownEndsLiveStreams(t *testing.T) {
	t.Parallel()
	base, stop := startLab(t, "-db", ":memory:")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan error, 3)
	for range 3 {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/labs/demo/events", nil)
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			_, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ended <- err
		}()
	}
	start := time.Now()
	if err := stop(); err != nil {
		t.Errorf("run: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %v with streams open", d)
	}
	for range 3 {
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatal("a stream did not end with the server")
		}
	}
}

// -h prints the usage and is not an error.
func TestHelpIsNotAnError(t *testing.T) {
	t.Parallel()
	out := &logtest.Buffer{}
	if err := run(context.Background(), []string{"idemlab", "-h"}, func(string) string { return "" }, out); err != nil {
		t.Errorf("-h: %v, want nil", err)
	}
	for _, flag := range []string{"-lab-idle", "-max-labs", "-max-inflight", "-max-streams"} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("the usage does not list %s:\n%s", flag, out.String())
		}
	}
}
