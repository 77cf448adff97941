package web

import (
	"fmt"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/views"
)

// A page that falls behind gets the latest state of each kind, never an
// older one, and never loses a settings change behind a later swap.
func TestStreamHoldsTheLatest(t *testing.T) {
	t.Parallel()
	s := &stream{wake: make(chan struct{}, 1)}
	s.put([]byte("swap 1"), nil)
	s.put(nil, []byte("settings 1"))
	s.put([]byte("swap 2"), nil)
	swap, sets, gone := s.take()
	if string(swap) != "swap 2" || string(sets) != "settings 1" || gone {
		t.Errorf("took %q, %q, %v; want the newest swap and the settings", swap, sets, gone)
	}
	if swap, sets, _ := s.take(); swap != nil || sets != nil {
		t.Errorf("took again %q, %q; want nothing", swap, sets)
	}
	s.end()
	if _, _, gone := s.take(); !gone {
		t.Error("a stream whose lab is gone does not say so")
	}
}

// The log keeps the last logKeep lines, the newest first.
func TestLogRing(t *testing.T) {
	t.Parallel()
	var r logRing
	if got := r.newestFirst(); len(got) != 0 {
		t.Errorf("an empty log has %d lines", len(got))
	}
	for i := range logKeep + 7 {
		r.add(views.LogLine{At: fmt.Sprint(i)})
	}
	got := r.newestFirst()
	if len(got) != logKeep || got[0].At != fmt.Sprint(logKeep+6) || got[logKeep-1].At != "7" {
		t.Errorf("%d lines, newest %q, oldest %q; want %d, %d, 7", len(got), got[0].At, got[len(got)-1].At, logKeep, logKeep+6)
	}
}

// A charge kept as its event is said, when the log is read, in its place
// among the other lines: its time, the server's lane, the payment.
func TestLogRingSaysCharges(t *testing.T) {
	t.Parallel()
	var r logRing
	at := time.Date(2026, 12, 3, 9, 30, 1, 250e6, time.UTC)
	r.add(views.LogLine{At: "before"})
	r.addCharge(sim.Event{Kind: sim.EventCharge, At: at, Outcome: sim.OutcomeCharged, OrderID: "order-42",
		Payment: &sim.Payment{ID: 7, Amount: 1500}})
	r.add(views.LogLine{At: "after"})
	got := r.newestFirst()
	if len(got) != 3 || got[0].At != "after" || got[2].At != "before" {
		t.Fatalf("lines %+v; want after, the charge, before", got)
	}
	c := got[1]
	if c.At != at.Format("15:04:05.000") || c.Kind != "server" || c.Msg.Key != "log.charge.commit" || c.Msg.Args[1] != int64(7) {
		t.Fatalf("the charge's line %+v; want its time, the server, COMMIT of payment 7", c)
	}
}
