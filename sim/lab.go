package sim

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// DemoLab is the id of the lab that always exists and everyone shares.
const DemoLab = "demo"

// Config holds what an Engine depends on.
type Config struct {
	Store  *Store
	Now    func() time.Time // defaults to time.Now
	Logger *slog.Logger     // defaults to a logger that discards
	// OnEvent, when set, is told of everything that happens in any lab. It is
	// called synchronously and must not block.
	OnEvent func(Event)
	// SweepEvery is how often expired idempotency records and idle labs
	// are deleted; zero means every minute.
	SweepEvery time.Duration
	// LabIdle is how long a private lab may go untouched before it is
	// removed with everything in it; zero means DefaultLabIdle.
	LabIdle time.Duration
	// MaxLabs is how many labs the server holds at most; zero means
	// DefaultMaxLabs.
	MaxLabs int
	// MaxInFlight is how many simulated requests may be in flight across
	// all labs at once; zero means DefaultMaxInFlight.
	MaxInFlight int
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

	obsMu     sync.RWMutex
	observers []func(Event)

	mu   sync.Mutex
	labs map[string]*Lab

	flaters sync.Pool // *flate.Writer, for scenario codes

	self   selfTarget
	ctx    context.Context // ends when the engine closes
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Lab is one isolated world: ledger, idempotency records, settings, history.
type Lab struct {
	ID string

	mu       sync.Mutex
	settings Settings
	src      *mrand.ChaCha8 // the lab's seeded randomness; also the source of its UUIDs
	rng      *mrand.Rand
	lesson   LessonState

	// steps lets one lesson action run at a time (set-up and steps); it is
	// taken before mu, never while mu is held.
	steps sync.Mutex
}

// NewEngine returns an engine over cfg.Store, with lab "demo" created if
// missing, and starts its background sweeper.
func NewEngine(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.Store == nil {
		return nil, errors.New("engine: no store")
	}
	e := &Engine{store: cfg.Store, now: cfg.Now, log: cfg.Logger, labs: map[string]*Lab{}}
	if cfg.OnEvent != nil {
		e.observers = append(e.observers, cfg.OnEvent)
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	res, err := e.store.w.ExecContext(ctx,
		`INSERT INTO labs (id, settings, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		DemoLab, mustJSON(DefaultSettings()), e.stamp())
	if err != nil {
		return nil, fmt.Errorf("engine: create demo lab: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		base := DefaultSettings()
		if err := e.record(ctx, e.store.w, DemoLab, Action{Kind: "base", Base: &base}); err != nil {
			return nil, fmt.Errorf("engine: create demo lab: %w", err)
		}
	}
	e.ctx, e.cancel = context.WithCancel(context.WithoutCancel(ctx))
	every := cfg.SweepEvery
	if every <= 0 {
		every = time.Minute
	}
	e.spawn(func() { e.sweep(every) })
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

// sweep deletes expired idempotency records until the engine closes.
func (e *Engine) sweep(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
			if _, err := e.store.w.ExecContext(e.ctx,
				`DELETE FROM idempotency_records WHERE expires_at <= ? AND state = 'done'`, e.now().UnixMilli()); err != nil && e.ctx.Err() == nil {
				e.log.Warn("sweep expired idempotency records", "err", err)
			}
		}
	}
}

// SetSelf tells the engine where its own charge endpoint listens: the base
// URL (scheme://host:port) and the transport that reaches it. The simulated
// client sends its real HTTP requests there.
func (e *Engine) SetSelf(baseURL string, transport http.RoundTripper) {
	e.self.set(baseURL, transport)
}

// NewLabID returns an unguessable lab id: 128 random bits, URL-safe.
func NewLabID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ValidLabID reports whether id has the shape of a lab id, so that
// malformed ids are refused without touching the database.
func ValidLabID(id string) bool {
	if id == DemoLab {
		return true
	}
	if len(id) != 22 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}

// CreateLab makes a private lab with default settings and a random seed.
func (e *Engine) CreateLab(ctx context.Context) (*Lab, error) {
	s := DefaultSettings()
	s.Seed = mrand.Int64N(MaxSeed)
	id := NewLabID()
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO labs (id, settings, created_at) VALUES (?, ?, ?)`, id, mustJSON(s), e.stamp()); err != nil {
			return err
		}
		return e.record(ctx, tx, id, Action{Kind: "base", Base: &s})
	})
	if err != nil {
		return nil, fmt.Errorf("engine: create lab: %w", err)
	}
	return e.Lab(ctx, id)
}

// Lab returns the lab with the given id, or ENotFound.
func (e *Engine) Lab(ctx context.Context, id string) (*Lab, error) {
	if !ValidLabID(id) {
		return nil, Errorf(ENotFound, "There is no lab %q.", id)
	}
	e.mu.Lock()
	l, ok := e.labs[id]
	e.mu.Unlock()
	if ok {
		return l, nil
	}
	var (
		raw    string
		lesson LessonState
	)
	err := e.store.r.QueryRowContext(ctx, `
SELECT l.settings, COALESCE(ll.lesson, 0), COALESCE(ll.ready, 0), COALESCE(ll.next, 0)
FROM labs l LEFT JOIN lab_lessons ll ON ll.lab_id = l.id WHERE l.id = ?`, id).Scan(&raw, &lesson.N, &lesson.Ready, &lesson.Next)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, Errorf(ENotFound, "There is no lab %q.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: load lab %s: %w", id, err)
	}
	var s Settings
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return nil, fmt.Errorf("engine: lab %s settings: %w", id, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if l, ok := e.labs[id]; ok { // another request loaded it meanwhile
		return l, nil
	}
	l = &Lab{ID: id, settings: s, lesson: lesson}
	l.reseed()
	e.labs[id] = l
	return l, nil
}

// reseed restarts the lab's random source from its seed; l.mu must be held
// (or l not yet shared).
func (l *Lab) reseed() {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], uint64(l.settings.Seed))
	copy(key[8:], "idempotency-lab")
	l.src = mrand.NewChaCha8(key)
	l.rng = mrand.New(l.src)
}

// Settings returns the lab's current settings.
func (l *Lab) Settings() Settings {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.settings
}

// draw runs f with the lab's random source, under the lab's lock.
func (l *Lab) draw(f func(r *mrand.Rand)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(l.rng)
}

// UpdateSettings merges p into the lab's settings and stores them. A new
// seed restarts the lab's random source.
func (e *Engine) UpdateSettings(ctx context.Context, l *Lab, p SettingsPatch) (Settings, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, err := l.settings.Apply(p)
	if err != nil {
		return Settings{}, err
	}
	err = e.store.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE labs SET settings = ? WHERE id = ?`, mustJSON(s), l.ID); err != nil {
			return err
		}
		return e.record(ctx, tx, l.ID, Action{Kind: "settings", Settings: &p})
	})
	if err != nil {
		return Settings{}, fmt.Errorf("engine: save settings of %s: %w", l.ID, err)
	}
	l.settings = s
	if p.Seed != nil {
		l.reseed()
	}
	e.emit(Event{Lab: l.ID, Kind: EventSettings, Settings: &s})
	return s, nil
}

// Reset empties the lab's payments, idempotency records and history, keeps
// its settings, and restarts its random source from the seed. A lesson's
// step that is running ends first; the lesson must then be set up again.
func (e *Engine) Reset(ctx context.Context, l *Lab) error {
	l.steps.Lock()
	defer l.steps.Unlock()
	return e.reset(ctx, l)
}

// reset is Reset for a caller that holds l.steps.
func (e *Engine) reset(ctx context.Context, l *Lab) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		for _, table := range []string{"payments", "idempotency_records", "operations", "attempts"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE lab_id = ?`, l.ID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE lab_lessons SET ready = 0, next = 0 WHERE lab_id = ?`, l.ID); err != nil {
			return err
		}
		base := l.settings // a scenario starts again here
		return e.record(ctx, tx, l.ID, Action{Kind: "base", Base: &base})
	})
	if err != nil {
		return fmt.Errorf("engine: reset %s: %w", l.ID, err)
	}
	l.reseed()
	l.lesson.Ready, l.lesson.Next = false, 0 // set the lesson up again to replay it
	e.emit(Event{Lab: l.ID, Kind: EventReset})
	return nil
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

// stamp is the engine's current time as stored in the database.
func (e *Engine) stamp() string { return e.now().UTC().Format(time.RFC3339Nano) }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are marshalled here
	}
	return string(b)
}
