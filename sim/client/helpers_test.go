package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/client"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/labs"
	"idemlab/sim/store"
	"idemlab/sim/waittest"
)

var start = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

// inProcess is an http.RoundTripper that hands each request to a handler
// in the process: the client's whole path, with no server and no socket.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// request is what reached the server.
type request struct {
	Key     string // "" when none came
	Attempt string // the client's Idemlab-Attempt header
	At      time.Duration
}

// answer is what the server sends back.
type answer struct {
	status     int
	retryAfter int // seconds; 0 sends none
}

// server is the lab's server as a table: it writes down every request that
// reaches it, with the time on the clock, and answers the n-th with
// answers[n-1] (the last one again past the end: 201 when there are none).
type server struct {
	clock   clock.Clock
	answers []answer
	hold    chan struct{} // when set, each request waits for it to close before its answer
	arrived chan struct{} // when set, told of each request as it arrives

	mu       sync.Mutex
	got      []request
	released sync.Once
}

// release lets the held requests answer.
func (s *server) release() {
	s.released.Do(func() {
		if s.hold != nil {
			close(s.hold)
		}
	})
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.got = append(s.got, request{Key: r.Header.Get(api.HeaderKey), Attempt: r.Header.Get(api.HeaderAttempt), At: s.clock.Now().Sub(start)})
	a := answer{status: http.StatusCreated}
	if n := len(s.got); len(s.answers) > 0 {
		a = s.answers[min(n, len(s.answers))-1]
	}
	s.mu.Unlock()
	if s.arrived != nil {
		s.arrived <- struct{}{}
	}
	if s.hold != nil {
		<-s.hold
	}
	if a.retryAfter > 0 {
		w.Header().Set(api.HeaderRetryAfter, strconv.Itoa(a.retryAfter))
	}
	w.Header().Set("Content-Type", api.ContentJSON)
	w.WriteHeader(a.status)
	w.Write([]byte(`{"id":1,"order_id":"order-42","amount":1500}`))
}

// requests returns what reached the server so far.
func (s *server) requests() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.got...)
}

// rig is the simulated client of a registry of labs on a real SQLite
// database, sending to the server through inProcess.
type rig struct {
	c   *client.Client
	r   *labs.Registry
	bus *events.Bus
	srv *server
}

// newRig builds the client on the clock.
func newRig(t *testing.T, clk clock.Clock, srv *server) rig {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	bus := events.New(clk.Now)
	reg, err := labs.New(ctx, labs.Config{Store: db, Clock: clk, Bus: bus})
	if err != nil {
		t.Fatalf("new registry: %v", err)
	}
	srv.clock = clk
	c := client.New(client.Config{BaseURL: "http://lab.test", Transport: inProcess{srv}, Store: db, Labs: reg, Bus: bus, Clock: clk})
	t.Cleanup(c.Close)
	if err := reg.Start(ctx, c.Room()); err != nil {
		t.Fatalf("start the registry: %v", err)
	}
	return rig{c: c, r: reg, bus: bus, srv: srv}
}

// newLab makes a private lab with the default settings, changed by set.
func (g rig) newLab(t *testing.T, set func(*sim.Settings)) *labs.Lab {
	t.Helper()
	s := sim.DefaultSettings()
	if set != nil {
		set(&s)
	}
	l, err := g.r.Create(context.Background(), labs.KindPrivate, s)
	if err != nil {
		t.Fatalf("create a lab: %v", err)
	}
	return l
}

// charge is the operation every test starts.
var charge = sim.OperationRequest{OrderID: "order-42", Amount: 1500}

// done is how an operation run in the background ended.
type done struct {
	op  sim.Operation
	err error
}

// async runs do in a goroutine and returns where its end comes. When the
// test ends, the client stops (its retry loops end, its attempts stop
// waiting), the server lets go, and the goroutine is waited for: nothing
// of it outlives the test.
func (g rig) async(t *testing.T, do func() (sim.Operation, error)) <-chan done {
	t.Helper()
	ch, finished := make(chan done, 1), make(chan struct{})
	go func() {
		defer close(finished)
		op, err := do()
		ch <- done{op, err}
	}()
	t.Cleanup(func() { g.c.Stop(); g.srv.release(); <-finished })
	return ch
}

// next returns the next event of the kind on sub, failing the test when
// none comes.
func next(t *testing.T, sub *events.Sub, kind sim.EventKind) sim.Event {
	t.Helper()
	var got sim.Event
	waittest.For(t, "a "+string(kind)+" event", func() bool {
		for {
			select {
			case got = <-sub.Events():
				if got.Kind == kind {
					return true
				}
			default:
				return false
			}
		}
	})
	return got
}

// receive returns what comes on ch, failing the test when nothing does.
func receive[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	var v T
	waittest.For(t, what, func() bool {
		select {
		case v = <-ch:
			return true
		default:
			return false
		}
	})
	return v
}
