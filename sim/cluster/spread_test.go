package cluster

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
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
	ctx := context.Background()
	dsn := pgtest.Database(t)
	stall := make(chan struct{})
	var broughtIn atomic.Value // the lab of the last reset B brought in
	start := func(s *store.Store, heard func(sim.Event) error) *Cluster {
		c, err := Start(ctx, Config{Store: s, Bus: events.New(time.Now), Clock: clock.Real(),
			Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			Heard: func(_ context.Context, ev sim.Event) error { return heard(ev) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		return c
	}
	sa := openOn(t, dsn)
	a := start(sa, func(sim.Event) error { return nil })
	b := start(openOn(t, dsn), func(ev sim.Event) error {
		if ev.Kind == sim.EventReset {
			if ev.Lab == "lab-stalled" {
				<-stall
			}
			broughtIn.Store(ev.Lab)
		}
		return nil
	})
	var once sync.Once
	free := func() { once.Do(func() { close(stall) }) }
	t.Cleanup(free) // before the clusters close: B's bringing in waits for it
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
			t.Fatal(err)
		}
	}

	for i := range 5 {
		reset("lab-heard")
		if got, _ := broughtIn.Load().(string); got != "lab-heard" {
			t.Fatalf("reset %d: A's write returned before B brought the reset in (B's last: %q)", i, got)
		}
		if !b.Trusted() {
			t.Errorf("reset %d: B, which heard it, stopped trusting its memory", i)
		}
	}

	reset("lab-stalled")
	if b.Trusted() {
		t.Fatal("A's write returned while B, which has not brought it in, still trusts its memory")
	}
	if got, _ := broughtIn.Load().(string); got == "lab-stalled" {
		t.Fatal("B brought in a reset it was held from")
	}
}
