package cluster

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/pgtest"
	"idemlab/sim/store"
)

// A process that falls behind what it hears (more notices than it holds
// come while it handles one) does not skip them silently: it is told to
// start over, and drops what it keeps.
func TestFallingBehindStartsOver(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	release := make(chan struct{})
	var (
		mu    sync.Mutex
		heard []sim.EventKind
	)
	c, err := Start(ctx, Config{Store: s, Bus: events.New(time.Now), Clock: clock.Real(),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Heard: func(_ context.Context, ev sim.Event) {
			mu.Lock()
			heard = append(heard, ev.Kind)
			first := len(heard) == 1
			mu.Unlock()
			if first {
				<-release // busy with the first while the rest come
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // before the close, which waits for the listener
	// Notices of another process, each its own (PostgreSQL folds equal
	// ones of a transaction into one), more than the process holds.
	if _, err := s.Pool().Exec(ctx, `SELECT pg_notify('idemlab', '{"from":"another","ev":{"Lab":"lab-' || g || '","Kind":"charge"}}') FROM generate_series(1, $1::int) g`, 3*incoming); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the listener to hear more than it holds", func() bool { return c.inSub.Lost() > 0 })
	free()
	waitFor(t, "a start-over", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(heard, sim.EventStartOver)
	})
}

// waitFor polls cond for a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
