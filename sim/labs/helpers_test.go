package labs_test

import (
	"context"
	"sync"
	"testing"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/housetest"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

var start = housetest.Start

// eachStore runs f on SQLite, and on PostgreSQL where there is one.
var eachStore = housetest.EachStore

// world is a registry of labs on a real database and a fake clock, with
// one room that writes down when it is told to let a lab go.
type world struct {
	r     *labs.Registry
	clock *clock.Fake
	room  *recorder
}

// open opens the registry with cfg (its Store, Clock and Bus set here).
func open(t *testing.T, dsn string, cfg labs.Config) world {
	t.Helper()
	ctx := context.Background()
	db, fake := housetest.Store(t, dsn), clock.NewFake(start)
	cfg.Store, cfg.Clock, cfg.Bus = db, db.Clock(fake), events.New(fake.Now)
	r, err := labs.New(ctx, cfg)
	if err != nil {
		t.Fatalf("new registry: %v", err)
	}
	w := world{r: r, clock: fake, room: &recorder{}}
	if err := r.Start(ctx, w.room); err != nil {
		t.Fatalf("start the registry: %v", err)
	}
	return w
}

// create makes a lab of the kind.
func (w world) create(t *testing.T, kind string) *labs.Lab {
	t.Helper()
	l, err := w.r.Create(context.Background(), kind, sim.DefaultSettings())
	if err != nil {
		t.Fatalf("create a %s lab: %v", kind, err)
	}
	return l
}

// sweep does the housekeeping once.
func (w world) sweep(t *testing.T) {
	t.Helper()
	if err := w.r.Janitor().Sweep(context.Background()); err != nil {
		t.Fatalf("sweep: %v", err)
	}
}

// closed is a room's letting go of a lab.
type closed struct {
	Lab string
	Why labs.Closing
}

// recorder is a room that keeps nothing and writes down each Close.
type recorder struct {
	mu     sync.Mutex
	closes []closed
}

func (*recorder) Init(context.Context, *store.Tx, string) error  { return nil }
func (*recorder) Reset(context.Context, *store.Tx, string) error { return nil }
func (*recorder) PurgeStatements() []string                      { return nil }

func (r *recorder) Close(_ context.Context, lab string, why labs.Closing) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closes = append(r.closes, closed{lab, why})
}

// take returns the closes written down so far, and forgets them.
func (r *recorder) take() []closed {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.closes
	r.closes = nil
	return out
}
