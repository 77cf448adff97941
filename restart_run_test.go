package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/sim/pgtest"
)

// restartRun is the state of TestPostgresRestartUnderLoad: its PostgreSQL,
// its processes, its labs and what their answers were.
type restartRun struct {
	t          *testing.T
	pg         *pgtest.PG
	args       []string // every process's flags
	env        []string // and what it finds in its environment
	a, b, c    *child
	live       atomic.Pointer[[]*child] // the processes the load and the retries go to
	load, slow string                   // the labs' API paths: the load's, the held requests'
	v          *verdicts
}

func (r *restartRun) setLive(ps ...*child) { r.live.Store(&ps) }
func (r *restartRun) procs() []*child      { return *r.live.Load() }

func (r *restartRun) name(p *child) string {
	switch p {
	case r.a:
		return "A"
	case r.b:
		return "B"
	case r.c:
		return "C"
	}
	return p.URL
}

// startTwo starts A and B side by side.
func (r *restartRun) startTwo() (*child, *child) {
	var (
		cs   [2]*child
		errs [2]error
		wg   sync.WaitGroup
	)
	for i := range cs {
		wg.Go(func() { cs[i], errs[i] = launchWith(r.t, r.env, "lab", r.args...) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			r.t.Fatal(err)
		}
	}
	return cs[0], cs[1]
}

// newLab makes a lab through p with the settings given; its API path.
func (r *restartRun) newLab(p *child, settings string) string {
	path := "/api/v1/labs/" + postJSON(r.t, p.URL+"/api/v1/labs", "", http.StatusCreated)["id"].(string)
	patch(r.t, p.URL+path+"/settings", settings)
	return path
}

// charge is one queued charge of the load's lab through p, with its own
// key, sent again as long as it is refused with Retry-After (5 s at most).
func (r *restartRun) charge(p *child, order string) answer {
	body := []byte(`{"order_id":"` + order + `","amount":100}`)
	var a answer
	waitEvery(5*time.Second, 100*time.Millisecond, func() bool {
		a = send(r.t.Context(), &http.Client{Timeout: 10 * time.Second}, "POST", p.URL+r.load+"/charges", body, "Idempotency-Key", "key-"+order)
		if _, refused := limited(a); refused {
			r.v.refused.Add(1)
			return false
		}
		return true
	})
	if a.status != http.StatusCreated {
		r.v.note("the charge of "+order+" through "+r.name(p), a)
	}
	return a
}

// emailAfter charges order through p at once and reports, when its email
// has come, whether it came within leaderWithin of since.
func (r *restartRun) emailAfter(p *child, order string, since time.Time) <-chan error {
	out := make(chan error, 1)
	go func() {
		if a := r.charge(p, order); a.status != http.StatusCreated {
			out <- fmt.Errorf("the charge of %s through %s: %d %v %.200s", order, r.name(p), a.status, a.err, a.body)
			return
		}
		if waitEvery(leaderWithin-time.Since(since), 50*time.Millisecond, func() bool { return r.emails(p, 1000)[order] > 0 }) {
			out <- nil
			return
		}
		out <- fmt.Errorf("%s, charged through %s, got no email within %s of the database's return", order, r.name(p), leaderWithin)
	}()
	return out
}

// emails counts the newest emails of the load's lab by order, as p sees
// them.
func (r *restartRun) emails(p *child, limit int) map[string]int {
	v, err := r.fetch(p, fmt.Sprintf("%s/emails?limit=%d", r.load, limit))
	if err != nil {
		return nil
	}
	return countBy(v, "emails")
}

// fetch GETs a JSON object from p; an error instead of t.Fatal, for the
// goroutines.
func (r *restartRun) fetch(p *child, path string) (map[string]any, error) {
	a := send(r.t.Context(), &http.Client{Timeout: 10 * time.Second}, "GET", p.URL+path, nil)
	if a.err != nil || a.status != http.StatusOK {
		return nil, fmt.Errorf("GET %s through %s: %d %v", path, r.name(p), a.status, a.err)
	}
	var v map[string]any
	return v, json.Unmarshal(a.body, &v)
}

// leaders are the live processes whose /healthz says they lead, once one
// does (within leaderWithin): more than one only for the moment a lead
// passes.
func (r *restartRun) leaders() []*child {
	var lead []*child
	waitUntil(leaderWithin, func() bool {
		lead = nil
		for _, p := range r.procs() {
			if h, err := r.fetch(p, "/healthz"); err == nil && h["leads"] == true {
				lead = append(lead, p)
			}
		}
		return len(lead) > 0
	})
	if len(lead) == 0 {
		r.t.Errorf("no live process says it leads (/healthz) within %s: no leader to kill", leaderWithin)
	}
	return lead
}

// verdicts counts the answers that are not what a request asked for: the
// refusals an outage allows (503 with Retry-After), and samples of the
// rest, which no one may get.
type verdicts struct {
	refused atomic.Int64
	mu      sync.Mutex
	other   map[string]int // status (or "error") → answers
	samples []string
}

func (v *verdicts) note(what string, a answer) {
	if _, ok := limited(a); ok && a.status == http.StatusServiceUnavailable {
		v.refused.Add(1)
		return
	}
	kind := strconv.Itoa(a.status)
	if a.err != nil {
		kind = "error"
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.other[kind]++
	if len(v.samples) < 5 {
		v.samples = append(v.samples, fmt.Sprintf("%s: %d (Retry-After %q) %v %.200s", what, a.status, a.header.Get("Retry-After"), a.err, a.body))
	}
}

// realParts are the nats-server and redis-server every process shares:
// CI's ($IDEMLAB_TEST_NATS, $IDEMLAB_TEST_REDIS), or, outside CI, ones
// of the test's own when the programs are installed.
func realParts(t *testing.T) (natsURL, redisURL string) {
	natsURL, redisURL = os.Getenv("IDEMLAB_TEST_NATS"), os.Getenv("IDEMLAB_TEST_REDIS")
	if (natsURL == "" || redisURL == "") && os.Getenv("CI") == "true" {
		t.Fatal("IDEMLAB_TEST_NATS and IDEMLAB_TEST_REDIS must be set: CI starts a nats-server and a redis-server (.ci/run)")
	}
	if natsURL == "" {
		port := freePort(t)
		runServer(t, lookPath(t, "nats-server"), "-js", "-a", "127.0.0.1", "-p", port, "-sd", t.TempDir())
		natsURL = "nats://127.0.0.1:" + port
		within(t, "nats-server", func() bool { return answers(port) })
	}
	if redisURL == "" {
		port := freePort(t)
		runServer(t, lookPath(t, "redis-server"), "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
		redisURL = "redis://127.0.0.1:" + port + "/0"
		within(t, "redis-server", func() bool { return answers(port) })
	}
	return natsURL, redisURL
}

// answers reports whether something listens on the loopback port.
func answers(port string) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
	if err == nil {
		c.Close()
	}
	return err == nil
}

// dumpOnFailure logs, when the test failed, each process's warnings and
// its last lines.
func (r *restartRun) dumpOnFailure() {
	if !r.t.Failed() {
		return
	}
	for _, p := range []*child{r.a, r.b, r.c} {
		if p == nil {
			continue
		}
		var warn, last []string
		for line := range strings.Lines(p.out.String()) {
			if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
				warn = append(warn, line)
			}
			last = append(last, line)
		}
		last = last[max(0, len(last)-8):]
		r.t.Logf("process %s: %d warnings and errors logged; the first: %s\nits last lines: %s",
			r.name(p), len(warn), strings.Join(warn[:min(len(warn), 6)], ""), strings.Join(last, ""))
	}
}
