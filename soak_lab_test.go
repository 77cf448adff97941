package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// soak is the state of TestSoak: the lab, its clients and what they saw.
type soak struct {
	t        *testing.T
	db, addr string
	api, sse *http.Client
	cur      atomic.Pointer[child]
	children []*child // every lab process, in order

	mu       sync.Mutex
	counts   map[string]int64    // answers by kind, and other figures
	problems map[string][]string // by kind: the first few, each a request and its answer
	kept     map[string][]string // lab → paths of its 201s (payments, operations)
	letGo    [][2]string         // lab, path of a 201 in a lab left to idle out
	recent   []string            // the newest labs left to idle out, for streams
	opens    []time.Duration     // how long each stream took to be answered
	downAt   time.Time           // when the lab was killed
	upAt     time.Time           // when it served again
}

// args are the lab's flags for a listen address.
func (s *soak) args(addr string) []string {
	return []string{"-addr", addr, "-db", s.db, "-debug", "127.0.0.1:0",
		"-max-labs", strconv.Itoa(soakMaxLabs), "-max-inflight", strconv.Itoa(soakInFlight), "-max-streams", strconv.Itoa(soakMaxStreams)}
}

func (s *soak) start(addr string) *child {
	c := startChild(s.t, "lab", s.args(addr)...)
	s.cur.Store(c)
	return c
}

func (s *soak) url(path string) string { return s.cur.Load().URL + path }

func (s *soak) get(path string) answer {
	return send(context.Background(), s.api, "GET", s.url(path), nil)
}

// newLab creates a lab with settings for the whole soak, waiting out refusals.
func (s *soak) newLab(settings string) string {
	s.t.Helper()
	for range 50 {
		a := send(context.Background(), s.api, "POST", s.url("/api/v1/labs"), nil)
		if d, ok := limited(a); ok {
			time.Sleep(min(d, 5*time.Second))
			continue
		}
		id, ok := labID(a)
		if !ok {
			s.t.Fatalf("create lab: %d %v %s", a.status, a.err, a.body)
		}
		if a := send(context.Background(), s.api, "PATCH", s.url("/api/v1/labs/"+id+"/settings"), []byte(settings)); a.status != http.StatusOK {
			s.t.Fatalf("settings: %d %v %s", a.status, a.err, a.body)
		}
		return id
	}
	s.t.Fatal("could not create a lab: refused 50 times")
	return ""
}

// verdict is what judge made of an answer.
const (
	bad   = iota // counted as a problem, or a refusal the caller need not retry
	right        // one of the wanted statuses
	again        // refused with Retry-After (waited out), or the lab was down: send it again
)

// judge counts an answer under what, waits out a refusal, records anything
// SPEC does not allow, and says what to do next.
func (s *soak) judge(what string, a answer, want ...int) bool {
	return s.verdict(what, a, want...) == right
}

func (s *soak) verdict(what string, a answer, want ...int) int {
	if a.err != nil {
		if s.inOutage() {
			s.add(what+" during restart", 1)
			time.Sleep(100 * time.Millisecond)
			return again
		}
		s.problem("transport error", what+": "+a.err.Error())
		return bad
	}
	for _, w := range want {
		if a.status == w {
			s.add(fmt.Sprintf("%s %d", what, a.status), 1)
			return right
		}
	}
	if d, ok := limited(a); ok {
		s.add(fmt.Sprintf("%s %d", what, a.status), 1)
		time.Sleep(min(d, 5*time.Second))
		return again
	}
	kind := "unexpected status"
	switch {
	case a.status == http.StatusTooManyRequests || a.status == http.StatusServiceUnavailable:
		kind = "refusal without Retry-After"
	case a.status >= 500:
		kind = "5xx"
	}
	s.problem(kind, fmt.Sprintf("%s: %d %.300s", what, a.status, a.body))
	return bad
}

func (s *soak) add(name string, n int64) {
	s.mu.Lock()
	s.counts[name] += n
	s.mu.Unlock()
}

func (s *soak) problem(kind, sample string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts["problem "+kind]++
	if len(s.problems[kind]) < 5 {
		s.problems[kind] = append(s.problems[kind], sample)
	}
}

// outage marks the lab down (just before the kill) or up again.
func (s *soak) outage(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if down {
		s.downAt = time.Now()
	} else {
		s.upAt = time.Now()
	}
}

// inOutage reports whether a failure now belongs to the restart: from the
// kill until 3 s after the lab serves again.
func (s *soak) inOutage() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.downAt.IsZero() && (s.upAt.IsZero() || time.Since(s.upAt) < 3*time.Second)
}
