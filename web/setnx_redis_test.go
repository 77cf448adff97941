package web_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A storm of 300 concurrent requests with one key under set-nx: one
// payment, no 5xx.
func TestSetNXStorm300(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	lab := s.newLab(`{"protection":"set-nx"}`)
	codes := make(chan int, 300)
	start := make(chan struct{})
	for range 300 {
		go func() {
			<-start
			req, _ := http.NewRequest("POST", s.URL+lab+"/charges", strings.NewReader(`{"order_id":"order-42","amount":1500}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "storm-1")
			resp, err := s.client.Do(req)
			if err != nil {
				codes <- -1
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	close(start)
	seen := map[int]int{}
	for range 300 {
		seen[<-codes]++
	}
	if seen[http.StatusCreated] != 1 || seen[http.StatusOK] != 299 {
		t.Errorf("answers %v; want one 201 and 299 × 200", seen)
	}
	if led := s.ledger(lab); led.Count != 1 {
		t.Errorf("%d payments; want 1", led.Count)
	}
}

// Redis stopped in the middle: set-nx answers 503 naming the store and
// writes nothing, other protections go on, and set-nx recovers when the
// store is back. A redis-server of the test's own, so that it can stop it.
func TestSetNXRedisDownAndBack(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed: CI must install it (.ci/run)")
		}
		t.Skip("no redis-server here")
	}
	port := freePort(t)
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 2*time.Second, "redis-server to listen", func() bool {
			c, err := net.Dial("tcp", "127.0.0.1:"+port)
			if err == nil {
				c.Close()
			}
			return err == nil
		})
		return cmd
	}
	redis := start()
	t.Cleanup(func() { redis.Process.Kill(); redis.Wait() })
	s := startServer(t, func(o *serverOpts) { o.cfg.KV, o.cfg.Redis = true, "redis://127.0.0.1:"+port+"/0" })
	lab := s.newLab(`{"protection":"set-nx"}`)
	other := s.newLab(`{"protection":"unique"}`)
	charge := func(lab, key string) response {
		return s.do("POST", lab+"/charges", `{"order_id":"order-42","amount":1500}`, "Idempotency-Key", key)
	}
	if r := charge(lab, "k-1"); r.Status != http.StatusCreated {
		t.Fatalf("before the stop: %d %s", r.Status, r.Body)
	}
	redis.Process.Kill()
	redis.Wait()
	for _, key := range []string{"k-2", "k-1"} {
		r := charge(lab, key)
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || r.JSON(t)["limit"] != "kv" {
			t.Errorf("Redis down, key %s: %d %s (Retry-After %q); want 503 naming the store", key, r.Status, r.Body, r.Header.Get("Retry-After"))
		}
	}
	if led := s.ledger(lab); led.Count != 1 {
		t.Errorf("%d payments while Redis was down; want the 1 from before", led.Count)
	}
	if r := charge(other, "u-1"); r.Status != http.StatusCreated {
		t.Errorf("unique while Redis is down: %d %s; want 201", r.Status, r.Body)
	}
	if r := s.do("GET", "/labs/"+strings.TrimPrefix(lab, "/api/v1/labs/"), ""); r.Status != http.StatusOK || !strings.Contains(string(r.Body), `data-testid="keys-panel"`) {
		t.Errorf("the page while Redis is down: %d", r.Status)
	}
	redis = start() // an empty store: the keys it held are gone with it
	var r response
	poll(5*time.Second, func() bool {
		r = charge(lab, "k-3")
		return r.Status == http.StatusCreated
	})
	if r.Status != http.StatusCreated {
		t.Errorf("after Redis is back: %d %s; want 201", r.Status, r.Body)
	}
	if r := charge(lab, "k-3"); r.Status != http.StatusOK {
		t.Errorf("the same key again: %d; want 200 duplicate", r.Status)
	}
	if led := s.ledger(lab); led.Count != 2 {
		t.Errorf("%d payments; want 2", led.Count)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}
