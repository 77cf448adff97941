package cluster

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"idemlab/sim"
	"idemlab/sim/pgtest"
	"idemlab/sim/store"
	"idemlab/sim/waittest"
)

// A change told through one process (a reset) returns to its caller only
// once the other process has brought it in; when the other cannot (its
// bringing in stalls), only once the other no longer trusts what it keeps.
// Either way, whatever the caller does next through the other process
// finds it up to date or asking the database.
func TestSpreadWaitsForEveryProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.Database(t)
	var (
		entered   = make(chan struct{}, 1) // B has begun to bring in a reset of lab-held
		hold      = make(chan struct{})    // lets it finish
		stall     = make(chan struct{})    // lets B bring in the reset of lab-stalled, at the end
		broughtIn atomic.Value             // the lab of the last reset B brought in
	)
	sa := openOn(t, dsn)
	a, _ := startOn(t, sa, 0, func(sim.Event) error { return nil })
	b, _ := startOn(t, openOn(t, dsn), 0, func(ev sim.Event) error {
		if ev.Kind != sim.EventReset {
			return nil
		}
		switch ev.Lab {
		case "lab-held":
			entered <- struct{}{}
			<-hold
		case "lab-stalled":
			<-stall
		}
		broughtIn.Store(ev.Lab)
		return nil
	})
	var held, stalled sync.Once
	release := func() { held.Do(func() { close(hold) }) }
	t.Cleanup(func() { // before the clusters close: B's bringing in waits for them
		release()
		stalled.Do(func() { close(stall) })
	})
	waittest.For(t, "B to trust its memory", b.Trusted)
	waittest.For(t, "A to hear B beat", func() bool {
		a.co.mu.Lock()
		defer a.co.mu.Unlock()
		return a.co.peers[b.id] != nil
	})
	reset := func(lab string) {
		t.Helper()
		err := sa.Write(ctx, func(tx *store.Tx) error {
			tx.Notify(sim.Event{Lab: lab, Kind: sim.EventReset})
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}

	// While B is bringing the reset in, A's write has not returned; once
	// B has, it returns, and B still trusts its memory.
	written := make(chan struct{})
	go func() {
		defer close(written)
		reset("lab-held")
	}()
	<-entered
	select {
	case <-written:
		t.Fatal("A's write returned while B was still bringing the reset in")
	default:
	}
	release()
	<-written
	if got, _ := broughtIn.Load().(string); got != "lab-held" {
		t.Fatalf("A's write returned before B brought the reset in (B's last: %q)", got)
	}
	if !b.Trusted() {
		t.Error("B, which heard the reset, stopped trusting its memory")
	}

	reset("lab-stalled")
	if b.Trusted() {
		t.Fatal("A's write returned while B, which has not brought it in, still trusts its memory")
	}
	if got, _ := broughtIn.Load().(string); got == "lab-stalled" {
		t.Fatal("B brought in a reset it was held from")
	}
}
