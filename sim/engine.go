package sim

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Config holds what an Engine depends on.
type Config struct {
	Store  *Store
	Now    func() time.Time // defaults to time.Now
	Logger *slog.Logger     // defaults to a logger that discards
	// OnEvent, when set, is told of everything that happens in any lab. It is
	// called synchronously and must not block.
	OnEvent func(Event)
	// SweepEvery is how often expired idempotency records and idle labs
	// are deleted; zero means every minute, or a quarter of LabIdle when
	// that is shorter.
	SweepEvery time.Duration
	// LabIdle is how long a private lab may go untouched before it is
	// removed with everything in it; zero means DefaultLabIdle.
	LabIdle time.Duration
	// MaxLabs is how many labs the server holds at most; zero means
	// DefaultMaxLabs.
	MaxLabs int
	// MaxInFlight is how many simulated requests may be in flight across
	// all labs at once; zero means DefaultMaxInFlight. One lab may use a
	// quarter of it, and never less than a race of 64 needs.
	MaxInFlight int
	// Rooms are mechanisms beside the lab's own (a broker, a mailbox, a
	// key-value store): their part of every lab's reset and removal.
	Rooms []Room
}

// The defaults of the server-wide limits.
const (
	DefaultLabIdle     = 7 * 24 * time.Hour
	DefaultMaxLabs     = 10_000
	DefaultMaxInFlight = 512
)

// Engine runs the labs: their ledgers, settings, simulated clients and
// networks. It owns every goroutine it starts; Close waits for them.
type Engine struct {
	store *Store
	now   func() time.Time
	log   *slog.Logger
	cfg   Config

	obsMu     sync.RWMutex
	observers []func(Event)

	labs     labCache
	inFlight slots   // simulated requests in flight, across all labs
	rooms    []Room  // every mechanism of a lab, for its reset and removal
	answers  answers // finished idempotency records, for replays without the database

	flaters sync.Pool // *flate.Writer, for scenario codes

	self   selfTarget
	ctx    context.Context // ends when the engine closes
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewEngine returns an engine over cfg.Store, with lab "demo" created if
// missing; it mends what a crash left behind and starts its janitor.
func NewEngine(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Store == nil {
		return nil, errors.New("engine: no store")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
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
	e := &Engine{store: cfg.Store, now: cfg.Now, log: cfg.Logger, cfg: cfg,
		labs: labCache{m: map[string]*Lab{}}, inFlight: slots{max: int64(cfg.MaxInFlight)},
		rooms: append(defaultRooms(), cfg.Rooms...)}
	if cfg.OnEvent != nil {
		e.observers = append(e.observers, cfg.OnEvent)
	}
	e.ctx, e.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := e.start(ctx); err != nil {
		e.cancel()
		return nil, err
	}
	e.spawn(e.janitor)
	return e, nil
}

// Stop tells the engine's simulated clients to stop: retry loops end and
// attempts stop waiting. Requests already at the server still finish.
func (e *Engine) Stop() { e.cancel() }

// Close stops the engine and waits for its background work to end,
// including attempts whose answers are still on their way.
func (e *Engine) Close() {
	e.cancel()
	e.wg.Wait()
}

// spawn runs f in a goroutine that Close waits for.
func (e *Engine) spawn(f func()) {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		f()
	}()
}

// SetSelf tells the engine where its own charge endpoint listens: the base
// URL (scheme://host:port) and the transport that reaches it. The simulated
// client sends its real HTTP requests there.
func (e *Engine) SetSelf(baseURL string, transport http.RoundTripper) {
	e.self.set(baseURL, transport)
}

// Observe adds f to those told of every event in any lab. f is called
// synchronously and must not block.
func (e *Engine) Observe(f func(Event)) {
	e.obsMu.Lock()
	defer e.obsMu.Unlock()
	e.observers = append(e.observers, f)
}

func (e *Engine) emit(ev Event) {
	e.obsMu.RLock()
	defer e.obsMu.RUnlock()
	if len(e.observers) == 0 {
		return
	}
	ev.At = e.now()
	for _, f := range e.observers {
		f(ev)
	}
}
