package labs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/store"
)

// The defaults of the server-wide limits.
const (
	DefaultLabIdle     = 7 * 24 * time.Hour
	DefaultMaxLabs     = 10_000
	DefaultMaxInFlight = 512
)

// memIdle is how long an unused lab stays in memory.
const memIdle = 10 * time.Minute

// Config is what a Registry depends on.
type Config struct {
	Store *store.Store
	Clock clock.Clock // by the database's clock (store.Clock); default the real one
	Bus   *events.Bus
	Log   *slog.Logger
	// LabIdle is how long a private lab may go untouched before it is
	// removed with everything in it; zero means DefaultLabIdle.
	LabIdle time.Duration
	// MaxLabs is how many labs the server holds at most; zero means
	// DefaultMaxLabs.
	MaxLabs int
	// MaxInFlight is how many simulated requests may be in flight across
	// all labs at once; zero means DefaultMaxInFlight. One lab, and one
	// client address, may use a quarter of it, and never less than two
	// races of sim.MaxRace.
	MaxInFlight int
	// LabsPerAddress is how many labs one client address may hold (of
	// those it made that still exist; a comparison's apart); zero means a
	// quarter of MaxLabs.
	LabsPerAddress int
	// SweepEvery is how often the janitor runs; zero means every minute,
	// or a quarter of LabIdle when that is shorter.
	SweepEvery time.Duration
}

// Registry holds the labs: those in use in memory, and how many the
// database holds, for the -max-labs limit.
type Registry struct {
	cfg    Config
	store  *store.Store
	clock  clock.Clock
	bus    *events.Bus
	log    *slog.Logger
	rooms  []Room
	acts   actions
	owners owners

	mu    sync.Mutex
	m     map[string]*Lab
	count atomic.Int64

	limits *Limits
}

// New returns the registry, its statements prepared; Start opens it.
func New(ctx context.Context, cfg Config) (*Registry, error) {
	if cfg.Store == nil || cfg.Bus == nil {
		return nil, errors.New("labs: no store or no bus")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.LabIdle <= 0 {
		cfg.LabIdle = DefaultLabIdle
	}
	if cfg.SweepEvery <= 0 { // often enough that a lab outlives its idle time by a quarter at most
		cfg.SweepEvery = min(time.Minute, max(time.Second, cfg.LabIdle/4))
	}
	if cfg.MaxLabs <= 0 {
		cfg.MaxLabs = DefaultMaxLabs
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	if cfg.LabsPerAddress <= 0 {
		cfg.LabsPerAddress = max(cfg.MaxLabs/4, 1)
	}
	r := &Registry{cfg: cfg, store: cfg.Store, clock: cfg.Clock, bus: cfg.Bus, log: cfg.Log,
		m: map[string]*Lab{}, limits: newLimits(cfg.MaxInFlight), owners: newOwners(cfg)}
	if err := r.acts.prepare(ctx, cfg.Store); err != nil {
		return nil, err
	}
	return r, nil
}

// Start opens the registry with the rooms of every lab, in the order their
// rows go: it makes lab "demo" if missing and, when no other process runs
// on the database, first mends what a crash left behind.
func (r *Registry) Start(ctx context.Context, rooms ...Room) error {
	r.rooms = rooms
	return start(ctx, r)
}

// Config is the registry's configuration, its defaults filled in.
func (r *Registry) Config() Config { return r.cfg }

// Lab returns the lab with the given id, or ENotFound, and marks it used.
func (r *Registry) Lab(ctx context.Context, id string) (*Lab, error) {
	if !sim.ValidLabID(id) {
		return nil, sim.NoLab(id)
	}
	now := r.clock.Now().UnixNano()
	r.mu.Lock()
	l, ok := r.m[id]
	if ok {
		l.used.Store(now)
	}
	r.mu.Unlock()
	if ok {
		return l, nil
	}
	st, err := scanState(r.store.QueryRow(ctx, stateQuery, id), id)
	if err != nil {
		return nil, err
	}
	if st.Kind == kindDoomed {
		return nil, sim.NoLab(id)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if l, ok := r.m[id]; ok { // another request loaded it meanwhile
		l.used.Store(now)
		return l, nil
	}
	l = newLab(id, st, r.limits.perLab)
	l.used.Store(now)
	l.touched.Store(-1) // unknown: the next flush writes it
	r.m[id] = l
	return l, nil
}

// CreatePrivate makes a private lab with default settings and a random seed.
func (r *Registry) CreatePrivate(ctx context.Context) (*Lab, error) {
	s := sim.DefaultSettings()
	s.Seed = mrand.Int64N(sim.MaxSeed)
	return r.Create(ctx, KindPrivate, s)
}

// Create makes a lab of the kind with the settings, within -max-labs and
// the share of the client address ctx carries (WithClient).
func (r *Registry) Create(ctx context.Context, kind string, s sim.Settings) (*Lab, error) {
	if err := r.Check(s); err != nil {
		return nil, err
	}
	if r.count.Add(1) > int64(r.cfg.MaxLabs) {
		r.count.Add(-1)
		return nil, sim.Busy("max-labs", r.cfg.SweepEvery, "max-labs", r.cfg.MaxLabs, int(r.cfg.LabIdle.Hours())) // idle labs go at the next sweep
	}
	id, owner := sim.NewLabID(), r.owners.of(ctx)
	now := r.clock.Now()
	var st State
	err := r.store.Write(ctx, func(tx *store.Tx) error {
		if err := r.owners.check(tx, owner, kind); err != nil {
			return err
		}
		made, err := r.insert(ctx, tx, id, kind, s, now, owner)
		if err == nil && !made {
			err = errors.New("a lab of that id exists")
		}
		if err != nil {
			return err
		}
		st, err = scanState(tx.QueryRow(stateQuery, id), id)
		return err
	})
	if err != nil {
		r.count.Add(-1)
		return nil, fmt.Errorf("labs: create: %w", err)
	}
	l := newLab(id, st, r.limits.perLab)
	l.used.Store(now.UnixNano())
	l.touched.Store(now.UnixMilli())
	r.mu.Lock()
	r.m[id] = l
	r.mu.Unlock()
	return l, nil
}

// insert writes a new lab's row, its rooms' parts and its scenario's base;
// made is false, and nothing written, when a lab of that id exists. owner
// is who made it (owners), or nil.
func (r *Registry) insert(ctx context.Context, tx *store.Tx, id, kind string, s sim.Settings, now time.Time, owner *string) (made bool, err error) {
	res, err := tx.Exec(`INSERT INTO labs (id, settings, created_at, kind, touched_at, owner) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		id, mustJSON(s), now.UnixMilli(), kind, now.UnixMilli(), owner)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	// The lab's counts: its numbering (operations, actions) and its rooms'.
	if _, err := tx.Exec(`INSERT INTO lab_counts (lab_id) VALUES (?)`, id); err != nil {
		return false, err
	}
	for _, room := range r.rooms {
		if err := room.Init(ctx, tx, id); err != nil {
			return false, err
		}
	}
	return true, r.Record(tx, id, sim.Action{Kind: "base", Base: &s})
}

// Check refuses settings the lab's database cannot give: the serializable
// check-then-insert is PostgreSQL's.
func (r *Registry) Check(s sim.Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.Isolation != sim.IsolationReadCommitted && !r.store.Postgres() {
		return sim.Invalid(sim.Broke("isolation", sim.PostgresOnly))
	}
	return nil
}

// Count is how many labs the server holds, of every kind.
func (r *Registry) Count() int64 { return r.count.Load() }

// InMemory is how many labs are held in memory now.
func (r *Registry) InMemory() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.m)
}

// Limits are the limits on simulated requests in flight.
func (r *Registry) Limits() *Limits { return r.limits }
