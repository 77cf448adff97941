// Package storm runs a retry storm: hundreds of simulated clients, each
// making operations with the lab's retry policy as real HTTP requests to
// the lab's own charge endpoint, through a network that may lose answers
// and a server that may be down for a while, and counts by the tenth of a
// second what they sent, what the server took and what it cost (SPEC, "The
// retry storm"). Every client's first operation goes at the storm's start
// (its first burst); after it, a client begins one a second, a second after
// its last began (later when that one's retries ran over). It retries
// automatically (whatever the policy's mode: a storm's clients are
// programs), within a retry budget of its own; its jitter draws come from
// the lab's seed.
package storm

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/events"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// Bounds of a storm.
const (
	MaxClients  = sim.MaxStormClients
	MaxDuration = sim.MaxStormDuration
	// Drain is how long a storm's operations may go on retrying after
	// its last one began.
	Drain = 30 * time.Second
	// MaxAttempts is the most attempts a storm sends in all: its clients
	// stop there.
	MaxAttempts = 200_000
	// maxKept is the most storms kept, running or done, over all labs.
	maxKept = 64
)

// Request is what a storm is asked to be.
type Request = sim.StormRequest

// down reports whether the server is down at d into the storm.
func down(r Request, d time.Duration) bool {
	o := r.Outage
	return o != nil && d >= seconds(o.AtS) && d < seconds(o.AtS+o.ForS)
}

// every is how often a client begins an operation.
func every(r Request) time.Duration {
	if r.EveryS == 0 {
		return time.Second
	}
	return seconds(r.EveryS)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Config is what the storms depend on.
type Config struct {
	BaseURL   string            // the lab's server
	Transport http.RoundTripper // reaches it
	Store     *store.Store      // the ledger, for the double charges
	Labs      *labs.Registry    // the in-flight limits
	Bus       *events.Bus       // told while a storm runs, and at its end
	Log       *slog.Logger
}

// Storms are the labs' storms: one running a lab at most, at most maxKept
// kept. Close stops those that run.
type Storms struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	kept []*Storm // oldest first
}

// New returns the labs' storms.
func New(cfg Config) *Storms {
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Storms{cfg: cfg}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// Close stops the storms that run and waits for their clients.
func (s *Storms) Close() {
	s.cancel()
	s.wg.Wait()
}

// Start starts a storm in the lab: 409 while one runs there, 503 when as
// many storms run as are kept.
func (s *Storms) Start(l *labs.Lab, r Request) (*Storm, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	running := 0
	for _, st := range s.kept {
		if st.running() {
			running++
			if st.Lab == l.ID {
				return nil, sim.Errorf(sim.EConflict, "storm-running", st.ID)
			}
		}
	}
	if running >= maxKept {
		return nil, sim.Busy("storms", 5*time.Second, "storms", maxKept)
	}
	if len(s.kept) == maxKept { // the oldest that is done goes
		for i, st := range s.kept {
			if !st.running() {
				s.kept = append(s.kept[:i], s.kept[i+1:]...)
				break
			}
		}
	}
	st := newStorm(s, l, r)
	s.kept = append(s.kept, st)
	s.wg.Go(st.run)
	return st, nil
}

// Room is the storms' part in a lab's life: a reset or a removal stops
// the lab's storm, and waits for its clients, first.
func (s *Storms) Room() labs.Room { return room{s} }

type room struct{ s *Storms }

func (room) Init(context.Context, *store.Tx, string) error  { return nil }
func (room) Reset(context.Context, *store.Tx, string) error { return nil }
func (room) PurgeStatements() []string                      { return nil }

// Halt stops the lab's storm before a reset, and forgets its storms: their
// payments go with the reset.
func (r room) Halt(ctx context.Context, lab string, _ labs.Closing) {
	r.s.stopLab(ctx, lab)
	r.s.Clear(lab)
}

// Close stops the lab's storm when the lab goes, and forgets its storms.
func (r room) Close(ctx context.Context, lab string, why labs.Closing) {
	if why != labs.Evicted { // a lab with a storm stays in memory: it holds it
		r.s.stopLab(ctx, lab)
		r.s.Clear(lab)
	}
}

// Clear forgets the lab's storms that are done.
func (s *Storms) Clear(lab string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kept = slices.DeleteFunc(s.kept, func(st *Storm) bool { return st.Lab == lab && !st.running() })
}

// stopLab stops the lab's running storm and waits for its end, or ctx's.
func (s *Storms) stopLab(ctx context.Context, lab string) {
	running := s.running(lab)
	if running == nil {
		return
	}
	running.stop()
	select {
	case <-running.done:
	case <-ctx.Done():
	}
}

// Stop stops the lab's storm id, if it runs, and waits for its clients'
// end, or ctx's; a storm already done stays as it was.
func (s *Storms) Stop(ctx context.Context, lab, id string) error {
	st, err := s.Get(lab, id)
	if err != nil {
		return err
	}
	st.stop()
	select {
	case <-st.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run starts a storm in the lab once the lab's running one (if any) has
// ended, and waits for its end, or ctx's: a lesson's step.
func (s *Storms) Run(ctx context.Context, l *labs.Lab, r Request) (*Storm, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	for {
		st, err := s.Start(l, r)
		if sim.ErrorCode(err) == sim.EConflict {
			if running := s.running(l.ID); running != nil {
				select {
				case <-running.done:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		select {
		case <-st.done:
			return st, nil
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}

// running is the lab's running storm, nil when none runs.
func (s *Storms) running(lab string) *Storm {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.kept {
		if st.Lab == lab && st.running() {
			return st
		}
	}
	return nil
}

// Running reports whether a storm runs in the lab.
func (s *Storms) Running(lab string) bool { return s.running(lab) != nil }

// Latest is the lab's last n storms (or fewer), oldest first.
func (s *Storms) Latest(lab string, n int) []View {
	s.mu.Lock()
	var of []*Storm
	for i := len(s.kept) - 1; i >= 0 && len(of) < n; i-- {
		if s.kept[i].Lab == lab {
			of = append(of, s.kept[i])
		}
	}
	s.mu.Unlock()
	views := make([]View, len(of))
	for i, st := range of {
		views[len(of)-1-i] = st.View()
	}
	return views
}

// Get is the lab's storm id.
func (s *Storms) Get(lab, id string) (*Storm, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.kept {
		if st.Lab == lab && st.ID == id {
			return st, nil
		}
	}
	return nil, sim.Errorf(sim.ENotFound, "no-storm", sim.Clip(id))
}
