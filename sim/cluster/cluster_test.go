package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/pgtest"
	"idemlab/sim/store"
	"idemlab/sim/waittest"
)

// A process that falls behind what it hears (more notices than it holds
// come while it handles one) does not skip them silently: it is told to
// start over, and drops what it keeps.
func TestFallingBehindStartsOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	release := make(chan struct{})
	var (
		mu    sync.Mutex
		heard []sim.EventKind
	)
	c, _ := startOn(t, s, 0, func(ev sim.Event) error {
		mu.Lock()
		heard = append(heard, ev.Kind)
		first := len(heard) == 1
		mu.Unlock()
		if first {
			<-release // busy with the first while the rest come
		}
		return nil
	})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // before the close, which waits for the listener
	// Notices of another process, each its own (PostgreSQL folds equal
	// ones of a transaction into one), more than the process holds.
	if _, err := s.Pool().Exec(ctx, `SELECT pg_notify('idemlab', '{"from":"another","ev":{"Lab":"lab-' || g || '","Kind":"charge"}}') FROM generate_series(1, $1::int) g`, 3*incoming); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, "the listener to hear more than it holds", func() bool { return c.in.Lost() > 0 })
	free()
	waittest.For(t, "a start-over", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(heard, sim.EventStartOver)
	})
}

// openStore opens a store on a PostgreSQL database of the test's own.
func openStore(t *testing.T) *store.Store { return openOn(t, pgtest.Database(t)) }

// startOn starts a cluster on s with a bus of its own, whose process
// brings in another's events with heard; gather 0 is the default's.
func startOn(t *testing.T, s *store.Store, gather time.Duration, heard func(sim.Event) error) (*Cluster, *events.Bus) {
	t.Helper()
	bus := events.New(time.Now)
	c, err := Start(context.Background(), Config{Store: s, Bus: bus, Clock: clock.Real(),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Gather: gather,
		Heard: func(_ context.Context, ev sim.Event) error { return heard(ev) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, bus
}

// openOn opens a store on the database dsn: a process of its own there.
func openOn(t *testing.T, dsn string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A process that starts alone sends no live events (nobody would hear
// them); one that starts beside it says hello, and from then on hears the
// first's events, as the first hears its.
func TestLiveEventsGoOutOnceAnotherListens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.Database(t)
	s := openOn(t, dsn)
	start := func(heard chan<- string) (*Cluster, *events.Bus) {
		return startOn(t, openOn(t, dsn), 0, func(ev sim.Event) error { heard <- ev.Lab; return nil })
	}
	// A listener of the test's own, which no process counts as another:
	// it hears what goes out on the channel, in order.
	raw, err := listenOn(ctx, s.Pool().Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close(context.Background())
	heard1, heard2 := make(chan string, 16), make(chan string, 16)
	first, bus1 := start(heard1)
	if first.others.Load() {
		t.Fatal("a process alone believes another listens")
	}
	bus1.Publish(sim.Event{Lab: "lab-alone", Kind: sim.EventCharge}) // goes out before lab-1, if at all
	second, bus2 := start(heard2)
	if !second.others.Load() {
		t.Error("a process that starts beside another does not know it")
	}
	waittest.For(t, "the first to hear the second's hello", first.others.Load)
	bus1.Publish(sim.Event{Lab: "lab-1", Kind: sim.EventCharge})
	bus2.Publish(sim.Event{Lab: "lab-2", Kind: sim.EventCharge})
	for _, c := range []struct {
		heard <-chan string
		want  string
	}{{heard2, "lab-1"}, {heard1, "lab-2"}} {
		select {
		case got := <-c.heard:
			if got != c.want {
				t.Errorf("heard an event of %q, want %q", got, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("the event of %s was not heard within 10 s", c.want)
		}
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		n, err := raw.WaitForNotification(wait)
		if err != nil {
			t.Fatalf("the first's lab-1 not on the channel: %v", err)
		}
		if strings.Contains(n.Payload, `"lab-alone"`) {
			t.Fatalf("the first sent an event while alone: %s", n.Payload)
		}
		if strings.Contains(n.Payload, `"lab-1"`) {
			return
		}
	}
}

// Live events go out packed, as many in one notice as fit in it, and are
// heard one by one, in order, whatever their size.
func TestEventsGoOutPacked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := pgtest.Database(t)
	s := openOn(t, dsn)
	raw, err := listenOn(ctx, s.Pool().Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close(context.Background())
	heard := make(chan sim.Event, 300)
	var (
		buses    []*events.Bus
		clusters []*Cluster
	)
	const window = time.Second // the first process's gathering
	for range 2 {
		c, bus := startOn(t, openOn(t, dsn), window, func(ev sim.Event) error { heard <- ev; return nil })
		buses, clusters = append(buses, bus), append(clusters, c)
	}
	waittest.For(t, "the first to hear the second's hello", clusters[0].others.Load)
	const n = 200
	for i := range n { // every tenth as big as a seventh of a notice
		ev := sim.Event{Lab: "lab-1", Kind: sim.EventCharge, OrderID: fmt.Sprintf("order-%d", i)}
		if i%10 == 0 {
			ev.OrderID += strings.Repeat("x", notifyMax/7)
		}
		buses[0].Publish(ev)
	}
	for i := range n {
		select {
		case ev := <-heard:
			if want := fmt.Sprintf("order-%d", i); strings.TrimRight(ev.OrderID, "x") != want {
				t.Fatalf("heard %.20s…, want %s: out of order", ev.OrderID, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d not heard within 10 s", i)
		}
	}
	if notices := noticesOf(t, raw, n, `"order-`); notices >= n/2 {
		t.Errorf("%d events in %d notices: not packed", n, notices)
	}

	// A trickle, each event published once the sender has taken the one
	// before: the first of a window waits for the rest, so they go in a
	// notice a window at most (sent as they are taken, one each).
	const trickle = 40
	began := time.Now()
	for i := range trickle {
		buses[0].Publish(sim.Event{Lab: "lab-1", Kind: sim.EventCharge, OrderID: fmt.Sprintf("trickle-%d", i)})
		waittest.For(t, "the sender to take the event", func() bool { return len(clusters[0].sub.Events()) == 0 })
	}
	windows := int(time.Since(began)/window) + 2
	if notices := noticesOf(t, raw, trickle, `"trickle-`); notices > windows {
		t.Errorf("a trickle of %d events in %d notices; want %d at most, one a window of %s", trickle, notices, windows, window)
	}
}

// noticesOf reads raw's notices until n events whose payloads hold mark
// have come, and returns how many notices carried them (of those it
// read: beats go between), checking that
// none weighs more than a notice may.
func noticesOf(t *testing.T, raw *pgx.Conn, n int, mark string) (notices int) {
	t.Helper()
	for got := 0; got < n; {
		wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		msg, err := raw.WaitForNotification(wait)
		cancel()
		if err != nil {
			t.Fatalf("after %d events %s… in %d notices: %v", got, mark, notices, err)
		}
		if len(msg.Payload) > notifyMax {
			t.Errorf("a notice of %d bytes, more than %d", len(msg.Payload), notifyMax)
		}
		if k := strings.Count(msg.Payload, mark); k > 0 { // not a beat nor another's event
			got += k
			notices++
		}
	}
	return notices
}
