package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/waittest"
)

// seen is an attempt as the client and the server each saw it.
type seen struct {
	Copies  int         // requests that reached the server
	Status  int         // what the client got; 0 for no answer
	Error   bool        // the client got an error instead
	Outcome sim.Outcome // what the server did, from its answers
	Answers int         // the server's answers the network saw go by
}

// Each fate of the network, played on an operation's one attempt: how many
// copies reach the server, what the client sees, and what the attempt
// records the server did.
func TestFates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fate sim.Fate
		want seen
	}{
		{sim.FateOK, seen{Copies: 1, Status: 201, Outcome: sim.OutcomeCharged, Answers: 1}},
		{sim.FateRequestLost, seen{Copies: 0, Error: true, Outcome: sim.OutcomeNotReached}},
		// The article's case: the server did the work, the client only
		// saw the connection go.
		{sim.FateResponseLost, seen{Copies: 1, Error: true, Outcome: sim.OutcomeCharged, Answers: 1}},
		{sim.FateDuplicate, seen{Copies: 2, Status: 201, Outcome: sim.OutcomeCharged, Answers: 2}},
	} {
		t.Run(string(tc.fate), func(t *testing.T) {
			g := newRig(t, clock.NewFake(start), &server{})
			l := g.newLab(t, func(s *sim.Settings) { s.KeyStrategy = sim.KeyUUID })
			r := charge
			r.Fate = tc.fate
			op, err := g.c.Start(context.Background(), l, r)
			if err != nil {
				t.Fatalf("start: %v", err)
			}
			if len(op.Attempts) != 1 {
				t.Fatalf("%d attempts, want 1", len(op.Attempts))
			}
			a := op.Attempts[0]
			got := seen{len(g.srv.requests()), a.Status, a.Error != nil, a.Outcome, len(a.Deliveries)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the attempt (-want +got):\n%s", diff)
			}
			if a.Fate != tc.fate || a.FinishedAt == nil {
				t.Errorf("attempt recorded fate %s, finished %v; want %s, finished", a.Fate, a.FinishedAt, tc.fate)
			}
			// Each copy gives its slot back once its goroutine ends.
			waittest.For(t, "every copy's slot given back", func() bool { return g.r.Limits().InFlight() == 0 })
		})
	}
}

// A slow answer: the client gives up at its timeout, by the clock, while
// the server still works; the answer that comes later is recorded on the
// attempt (what the server did), not as what the client saw.
func TestSlowAnswerIsLate(t *testing.T) {
	t.Parallel()
	srv := &server{hold: make(chan struct{})}
	g := newRig(t, clock.Real(), srv)
	l := g.newLab(t, func(s *sim.Settings) { s.ClientTimeoutMS = 50 })
	sub := g.bus.Subscribe(256)
	defer sub.Close()
	r := charge
	r.Fate = sim.FateSlow
	op, err := g.c.Start(context.Background(), l, r)
	srv.release()
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	a := op.Attempts[0]
	if a.Status != 0 || a.Error == nil || !strings.Contains(*a.Error, "timeout") || a.Outcome != sim.OutcomePending {
		t.Errorf("the client saw %d, error %v, outcome %s; want no answer, a timeout, pending", a.Status, a.Error, a.Outcome)
	}
	late := next(t, sub, sim.EventAttempt)
	for !late.Late {
		late = next(t, sub, sim.EventAttempt)
	}
	if late.Attempt.Outcome != sim.OutcomeCharged || late.Attempt.Status != 0 {
		t.Errorf("the late answer: outcome %s, status %d; want charged, still 0 for the client", late.Attempt.Outcome, late.Attempt.Status)
	}
	op, err = g.c.Operation(context.Background(), l, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a := op.Attempts[0]; a.Outcome != sim.OutcomeCharged || len(a.Deliveries) != 1 || a.Status != 0 {
		t.Errorf("recorded: outcome %s, %d answers, status %d; want charged, 1, 0", a.Outcome, len(a.Deliveries), a.Status)
	}
}

// The same on a fake clock: the client's timeout is the clock's, so the
// client gives up when the clock passes it, whatever the server does.
func TestSlowAnswerByTheClock(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(start)
	srv := &server{hold: make(chan struct{}), arrived: make(chan struct{}, 1)}
	g := newRig(t, fake, srv)
	l := g.newLab(t, func(s *sim.Settings) { s.ClientTimeoutMS = 1000 })
	r := charge
	r.Fate = sim.FateSlow
	started := g.async(t, func() (sim.Operation, error) { return g.c.Start(context.Background(), l, r) })
	receive(t, "the request at the server", srv.arrived)
	waittest.For(t, "the client's timeout set on the clock", func() bool { return fake.Timers() == 1 })
	fake.Advance(999 * time.Millisecond)
	select {
	case <-started:
		t.Fatal("the client gave up before its timeout")
	default:
	}
	fake.Advance(time.Millisecond)
	end := receive(t, "the client to give up at its timeout", started)
	if end.err != nil {
		t.Fatalf("start: %v", end.err)
	}
	if a := end.op.Attempts[0]; a.Status != 0 || a.Error == nil || a.Outcome != sim.OutcomePending {
		t.Errorf("the client saw %d, error %v, outcome %s; want no answer, an error, pending", a.Status, a.Error, a.Outcome)
	}
}
