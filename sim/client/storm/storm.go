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
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// Bounds of a storm.
const (
	MaxClients  = 2000
	MaxDuration = 60 // seconds of new operations
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
type Request struct {
	Clients   int     `json:"clients"`
	DurationS int     `json:"duration_s"`
	EveryS    float64 `json:"every_s,omitempty"` // a client begins an operation this often; 0 is 1
	Outage    *Outage `json:"outage,omitempty"`
	Key       bool    `json:"key"`
	Fates     Fates   `json:"fates"`
}

// Outage is a window in which the server is down: every attempt sent in it
// fails at once, without reaching it.
type Outage struct {
	AtS  float64 `json:"at_s"`
	ForS float64 `json:"for_s"`
}

// Fates are the network's chances for each attempt.
type Fates struct {
	ResponseLost float64 `json:"response-lost"` // the server does the work, the answer is lost
}

// Validate names every field of r out of its range.
func (r Request) Validate() error {
	var fs []sim.FieldError
	if r.Clients < 1 || r.Clients > MaxClients {
		fs = append(fs, sim.Broke("clients", "range", 1, MaxClients))
	}
	if r.DurationS < 1 || r.DurationS > MaxDuration {
		fs = append(fs, sim.Broke("duration_s", "range", 1, MaxDuration))
	}
	if e := r.EveryS; !(e == 0 || e >= 0.1 && e <= float64(MaxDuration)) {
		fs = append(fs, sim.Broke("every_s", "range-decimal", 0.1, float64(MaxDuration)))
	}
	if o := r.Outage; o != nil {
		if !(o.AtS >= 0 && o.AtS <= float64(MaxDuration)) {
			fs = append(fs, sim.Broke("outage.at_s", "range-decimal", 0.0, float64(MaxDuration)))
		}
		if !(o.ForS > 0 && o.ForS <= float64(MaxDuration)) {
			fs = append(fs, sim.Broke("outage.for_s", "range-decimal", 0.1, float64(MaxDuration)))
		}
	}
	if p := r.Fates.ResponseLost; !(p >= 0 && p <= 1) {
		fs = append(fs, sim.Broke("fates.response-lost", "range-decimal", 0.0, 1.0))
	}
	if len(fs) > 0 {
		return sim.Invalid(fs...)
	}
	return nil
}

// down reports whether the server is down at d into the storm.
func (r Request) down(d time.Duration) bool {
	o := r.Outage
	return o != nil && d >= seconds(o.AtS) && d < seconds(o.AtS+o.ForS)
}

// every is how often a client begins an operation.
func (r Request) every() time.Duration {
	if r.EveryS == 0 {
		return time.Second
	}
	return seconds(r.EveryS)
}

// calm is when the storm's calm begins: the outage's end, or its start.
func (r Request) calm() time.Duration {
	if o := r.Outage; o != nil {
		return seconds(o.AtS + o.ForS)
	}
	return 0
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Config is what the storms depend on.
type Config struct {
	BaseURL   string            // the lab's server
	Transport http.RoundTripper // reaches it
	Store     *store.Store      // the ledger, for the double charges
	Labs      *labs.Registry    // the in-flight limits
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
func (room) Purge(context.Context, string) error            { return nil }

// Halt stops the lab's storm before a reset.
func (r room) Halt(ctx context.Context, lab string, _ labs.Closing) { r.s.stopLab(ctx, lab) }

// Close stops the lab's storm when the lab goes.
func (r room) Close(ctx context.Context, lab string, why labs.Closing) {
	if why != labs.Evicted { // a lab with a storm stays in memory: it holds it
		r.s.stopLab(ctx, lab)
	}
}

// stopLab stops the lab's running storm and waits for its end, or ctx's.
func (s *Storms) stopLab(ctx context.Context, lab string) {
	s.mu.Lock()
	var running *Storm
	for _, st := range s.kept {
		if st.Lab == lab && st.running() {
			running = st
		}
	}
	s.mu.Unlock()
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

// View is a storm as its API shows it.
type View struct {
	ID      string   `json:"id"`
	State   string   `json:"state"` // running, done
	Request Request  `json:"request"`
	StepMS  int64    `json:"step_ms"`
	Series  []Bucket `json:"series"`
	Summary Summary  `json:"summary"`
}

// View is the storm now.
func (st *Storm) View() View {
	series, sum := st.rec.view()
	state := "done"
	if st.running() {
		state = "running"
		series = series[:min(len(series), int(time.Since(st.rec.start)/Step)+1)]
	}
	return View{ID: st.ID, State: state, Request: st.Req, StepMS: Step.Milliseconds(), Series: series, Summary: sum}
}

func (st *Storm) running() bool {
	select {
	case <-st.done:
		return false
	default:
		return true
	}
}

// ordersOf is the prefix of a storm's orders: storm-{id}-{client}-{n}.
func ordersOf(id string) string { return fmt.Sprintf("storm-%s-", id) }
