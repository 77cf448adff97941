// Package stepped is the race under a microscope: two or three real charge
// requests with one key, sent by the lab's client through its network to
// the lab's real charge endpoint, under the lab's protection. The ledger
// stops each request's charge at the protection's points (its own
// statements) until a person advances it: the person chooses the
// interleaving, the database decides what happens.
//
// A stepped race never holds a lock another lab needs: on SQLite its
// racers stop between statements, outside the one writer's transaction;
// on PostgreSQL a racer's transaction stays open between its points and
// holds its lab's locks only. One race per lab; one untouched for
// sim.SteppedIdle is aborted, and its transactions roll back.
package stepped

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/client"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/labs"
	"idemlab/sim/ledger"
	"idemlab/sim/store"
)

// Config is what the stepped races depend on.
type Config struct {
	Store  *store.Store
	Labs   *labs.Registry
	Client *client.Client
	Bus    *events.Bus
	Clock  clock.Clock
	Log    *slog.Logger
}

// Races are the labs' stepped races: the one running, or the last, of
// each lab in this process's memory.
type Races struct {
	Config
	mu     sync.Mutex
	byLab  map[string]*Race
	tokens map[string]*racer // the racers whose requests are still to come
	closed bool
	most   int // races running at once, server-wide; 0: no such limit
}

// New returns the labs' stepped races.
func New(cfg Config) *Races {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	rs := &Races{Config: cfg, byLab: map[string]*Race{}, tokens: map[string]*racer{}}
	if cfg.Store.Postgres() {
		// A racer's open transaction holds a connection while a person
		// thinks: the races together hold half the pool at most, so that
		// they never starve the other labs' writes.
		rs.most = max(1, int(cfg.Store.Pool().Config().MaxConns)/(2*sim.MaxRacers))
	}
	return rs
}

// Errors of the stepped races' rules.
var (
	errBusy    = &sim.Error{Code: sim.EConflict, Key: "stepped-busy", RetryAfter: sim.SteppedIdle}
	errClosing = &sim.Error{Code: sim.EConflict, Key: "stepped-closing", RetryAfter: 5 * time.Second}
	errToken   = sim.Invalid(sim.Broke("Idemlab-Stepped", "stepped-token"))
	errHolding = &sim.Error{Code: sim.EConflict, Key: "stepped-holds", RetryAfter: 5 * time.Second}
	errFull    = &sim.Error{Code: sim.EBusy, Key: "stepped-full", Limit: "stepped-races", RetryAfter: 30 * time.Second}
)

// Racer returns the Steps of the racer whose token a charge request of
// lab carries, bound to that request: its client's hanging up aborts it.
// A token is good for one request.
func (rs *Races) Racer(ctx context.Context, token, lab string) (ledger.Steps, error) {
	rs.mu.Lock()
	r := rs.tokens[token]
	if r != nil && r.rc.lab.ID == lab {
		delete(rs.tokens, token)
	}
	rs.mu.Unlock()
	if r == nil || r.rc.lab.ID != lab {
		return nil, errToken
	}
	r.arrive(ctx)
	return r, nil
}

// Holding refuses a change of the lab's settings while its stepped race
// runs on PostgreSQL: a racer's open transaction holds the lab's lock and
// counters, which the change would wait for until the race ends. (On
// SQLite no racer holds anything between its steps.)
func (rs *Races) Holding(l *labs.Lab) error {
	if !rs.Store.Postgres() {
		return nil
	}
	if rc, err := rs.race(l, ""); err == nil && !rc.over() {
		return errHolding
	}
	return nil
}

// race returns the lab's race with id; ENotFound when it is not that.
func (rs *Races) race(l *labs.Lab, id string) (*Race, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rc := rs.byLab[l.ID]
	if rc == nil || (id != "" && rc.id != id) {
		return nil, sim.Errorf(sim.ENotFound, "no-stepped-race", sim.Clip(id))
	}
	return rc, nil
}

// Latest is the lab's stepped race, running or the last one; false when
// it has none.
func (rs *Races) Latest(l *labs.Lab) (sim.SteppedRace, bool) {
	rc, err := rs.race(l, "")
	if err != nil {
		return sim.SteppedRace{}, false
	}
	return rc.view(), true
}

// Get returns the lab's stepped race id.
func (rs *Races) Get(l *labs.Lab, id string) (sim.SteppedRace, error) {
	rc, err := rs.race(l, id)
	if err != nil {
		return sim.SteppedRace{}, err
	}
	return rc.view(), nil
}

// Room is the stepped races' part in a lab's life: a reset halts the
// lab's race before its transaction (its racers hold the lab's locks),
// and a lab that goes takes its race along.
func (rs *Races) Room() labs.Room { return room{rs} }

type room struct{ rs *Races }

func (room) Init(context.Context, *store.Tx, string) error  { return nil }
func (room) Reset(context.Context, *store.Tx, string) error { return nil }
func (room) PurgeStatements() []string                      { return nil }

// Halt aborts the lab's race and waits for its racers to end.
func (r room) Halt(ctx context.Context, lab string, _ labs.Closing) {
	r.rs.drop(ctx, lab, sim.AbortReset)
}

// Close lets go of the lab's race; a lab merely stale keeps it.
func (r room) Close(ctx context.Context, lab string, why labs.Closing) {
	if why != labs.Stale {
		r.rs.drop(ctx, lab, sim.AbortReset)
	}
}

// drop aborts the lab's race, waits for its racers, and forgets it.
func (rs *Races) drop(ctx context.Context, lab, why string) {
	rs.mu.Lock()
	rc := rs.byLab[lab]
	delete(rs.byLab, lab)
	rs.mu.Unlock()
	if rc != nil {
		rc.abortAndWait(ctx, why)
	}
}

// Close aborts every race and waits for their racers: the server is
// stopping. New races are refused from then on.
func (rs *Races) Close() {
	rs.mu.Lock()
	rs.closed = true
	all := make([]*Race, 0, len(rs.byLab))
	for _, rc := range rs.byLab {
		all = append(all, rc)
	}
	rs.mu.Unlock()
	for _, rc := range all {
		rc.abortAndWait(context.Background(), sim.AbortClose)
	}
}

// publish tells the lab's pages that its stepped race changed.
func (rs *Races) publish(lab string) {
	rs.Bus.Publish(sim.Event{Lab: lab, Kind: sim.EventStepped})
}
