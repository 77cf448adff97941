package client_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/waittest"
)

// A race sends n attempts of an operation at the same moment, each with
// the operation's key: the server has all n in its hands at once before it
// answers any.
func TestRace(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 8, sim.MaxRace} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			srv := &server{}
			g := newRig(t, clock.NewFake(start), srv)
			l := g.newLab(t, func(s *sim.Settings) { s.KeyStrategy = sim.KeyUUID })
			ctx := context.Background()
			op, err := g.c.Start(ctx, l, charge)
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			srv.hold, srv.arrived = make(chan struct{}), make(chan struct{}, n)
			raced := g.async(t, func() (sim.Operation, error) { return g.c.Race(ctx, l, op.ID, n) })
			for i := range n {
				receive(t, fmt.Sprintf("racer %d of %d at the server, none answered", i+1, n), srv.arrived)
			}
			srv.release()
			end := receive(t, "the race's end", raced)
			if end.err != nil {
				t.Fatalf("race: %v", end.err)
			}
			op = end.op
			if len(op.Attempts) != n+1 {
				t.Fatalf("%d attempts, want %d", len(op.Attempts), n+1)
			}
			reqs := g.srv.requests()
			if len(reqs) != n+1 {
				t.Errorf("%d requests reached the server, want %d", len(reqs), n+1)
			}
			for i, r := range reqs {
				if op.Key == nil || r.Key != *op.Key {
					t.Errorf("request %d came with key %q, want the operation's %v", i+1, r.Key, op.Key)
				}
			}
			for _, a := range op.Attempts {
				if a.Status != 201 || a.Outcome != sim.OutcomeCharged {
					t.Errorf("attempt %d: %d %s, want 201 charged", a.N, a.Status, a.Outcome)
				}
			}
			waittest.For(t, "every racer's slot given back", func() bool { return g.r.Limits().InFlight() == 0 })
		})
	}
}

// A race is of 2 to 64 attempts.
func TestRaceSize(t *testing.T) {
	t.Parallel()
	g := newRig(t, clock.NewFake(start), &server{})
	l := g.newLab(t, nil)
	op, err := g.c.Start(context.Background(), l, charge)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{-1, 0, 1, sim.MaxRace + 1} {
		if _, err := g.c.Race(context.Background(), l, op.ID, n); sim.ErrorCode(err) != sim.EInvalid {
			t.Errorf("a race of %d: %v, want %s", n, err, sim.EInvalid)
		}
	}
	if got := len(g.srv.requests()); got != 1 {
		t.Errorf("%d requests reached the server, want the first one only", got)
	}
}

// Past the lab's share of requests in flight the client refuses an
// operation, a retry and a race with EBusy, before it writes or sends
// anything.
func TestBusy(t *testing.T) {
	t.Parallel()
	g := newRig(t, clock.NewFake(start), &server{})
	l := g.newLab(t, func(s *sim.Settings) { s.KeyStrategy = sim.KeyUUID })
	ctx := context.Background()
	op, err := g.c.Start(ctx, l, charge)
	if err != nil {
		t.Fatal(err)
	}
	_, done, err := g.r.Limits().Occupy(context.Background(), l, 2*sim.MaxRace) // the lab's whole share
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	for name, do := range map[string]func() (sim.Operation, error){
		"start": func() (sim.Operation, error) { return g.c.Start(ctx, l, charge) },
		"retry": func() (sim.Operation, error) { return g.c.Retry(ctx, l, op.ID, true, "") },
		"race":  func() (sim.Operation, error) { return g.c.Race(ctx, l, op.ID, 2) },
	} {
		if _, err := do(); sim.ErrorCode(err) != sim.EBusy {
			t.Errorf("%s: %v, want %s", name, err, sim.EBusy)
		}
	}
	ops, err := g.c.Operations(ctx, l, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 1 || len(ops[0].Attempts) != 1 || len(g.srv.requests()) != 1 {
		t.Errorf("%d operations, %d requests; want only the first of each", len(ops), len(g.srv.requests()))
	}
}
