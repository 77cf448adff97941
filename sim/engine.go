package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"idemlab/sim/broker"
	"idemlab/sim/keys"
	"idemlab/sim/mail"
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

	// Queue runs the broker of notify "queue": NATS with JetStream,
	// embedded in the process (its store in QueueDir, or in memory when
	// QueueDir is ""), or the external server at NATS. Without it notify
	// "queue" writes no message.
	Queue    bool
	NATS     string
	QueueDir string
	// Mailbox runs the lab's own SMTP mailbox, embedded in the process, on
	// a free loopback port; SMTP ("host:port") sends the lab's emails to an
	// external server instead (such as a teacher's Mailpit), and the lab
	// records each email as it sends it. With neither, no email is sent.
	Mailbox bool
	SMTP    string
	// KV runs the key-value store of protection "set-nx": a server of the
	// Redis protocol embedded in the process, or the Redis at Redis
	// (redis://host:6379/0). Without it "set-nx" is refused (503).
	KV    bool
	Redis string
	// Email is the words of the "order placed" email in a language (ru or
	// en): its subject and body. The words live in views.
	Email func(lang, orderID string, amount int64) (subject, body string)
	// Fault names a point where the process kills itself (SIGKILL), for the
	// crash tests that must stop it at one exact moment: FaultConsumerOutbox.
	// Empty in every ordinary run ($IDEMLAB_FAULT sets it).
	Fault string
}

// FaultConsumerOutbox is the moment between the consumer's commit (its
// memory of the message and the email's outbox row) and its ack.
const FaultConsumerOutbox = "consumer-outbox"

// fault kills the process at the point the config names: a real kill -9,
// with nothing flushed, as a crash does.
func (e *Engine) fault(point string) {
	if e.cfg.Fault == point {
		p, _ := os.FindProcess(os.Getpid())
		p.Kill()
		select {} // the signal takes a moment: never go past the point
	}
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

	broker       *broker.Broker // the queue's, when Config.Queue
	kv           *keys.Store    // set-nx's, when Config.KV
	mailbox      *mail.Server   // the lab's own, when Config.Mailbox
	mailAddr     string         // where emails go: the mailbox's or Config.SMTP
	mailExternal bool           // Config.SMTP: no mailbox of ours hears them
	relayWake    chan struct{}  // a message waits in the outbox (notify.go)
	consumers    consumers      // the labs whose consumer runs
	cluster      *cluster       // PostgreSQL: the other processes hear of our events

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
	if err := cfg.Store.measureSkew(ctx); err != nil { // expiry and lock timeouts go by the database's clock
		return nil, err
	}
	cfg.Now = cfg.Store.clock(cfg.Now)
	e := &Engine{store: cfg.Store, now: cfg.Now, log: cfg.Logger, cfg: cfg,
		labs: labCache{m: map[string]*Lab{}}, inFlight: slots{max: int64(cfg.MaxInFlight)},
		rooms: append(defaultRooms(), cfg.Rooms...), relayWake: make(chan struct{}, 1)}
	if cfg.OnEvent != nil {
		e.observers = append(e.observers, cfg.OnEvent)
	}
	e.ctx, e.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := e.start(ctx); err != nil {
		e.cancel()
		return nil, err
	}
	if err := e.startCluster(ctx); err != nil {
		e.cancel()
		return nil, fmt.Errorf("engine: listen to other processes: %w", err)
	}
	e.spawn(e.janitor)
	if err := e.startParts(ctx); err != nil {
		e.Close()
		return nil, fmt.Errorf("engine: start: %w", err)
	}
	return e, nil
}

// startParts starts the mailbox and the broker the config asks for, the
// outbox's relay and mailer, and the consumers of the messages left
// unacknowledged by the last run.
func (e *Engine) startParts(ctx context.Context) error {
	switch {
	case e.cfg.SMTP != "":
		e.mailAddr, e.mailExternal = e.cfg.SMTP, true
	case e.cfg.Mailbox:
		box, err := mail.Start(mail.Config{Deliver: e.ReceiveMail, Logger: e.log})
		if err != nil {
			return fmt.Errorf("mailbox: %w", err)
		}
		e.mailbox, e.mailAddr = box, box.Addr()
	}
	if e.mailAddr != "" {
		e.spawn(e.mailer)
	}
	if e.cfg.KV || e.cfg.Redis != "" {
		kv, err := keys.Start(ctx, keys.Config{URL: e.cfg.Redis, Logger: e.log})
		if err != nil {
			return err
		}
		e.kv = kv
	}
	if e.cfg.Queue || e.cfg.NATS != "" {
		b, err := broker.Start(ctx, broker.Config{URL: e.cfg.NATS, StoreDir: e.cfg.QueueDir, Logger: e.log})
		if err != nil {
			return fmt.Errorf("broker: %w", err)
		}
		e.broker = b
		e.spawn(e.relay)
	}
	return nil
}

// Stop tells the engine's simulated clients to stop: retry loops end and
// attempts stop waiting. Requests already at the server still finish.
func (e *Engine) Stop() { e.cancel() }

// Close stops the engine and waits for its background work to end,
// including attempts whose answers are still on their way; then the
// broker and the mailbox stop.
func (e *Engine) Close() {
	e.cancel()
	e.wg.Wait()
	if e.broker != nil {
		e.broker.Close()
	}
	if e.mailbox != nil {
		e.mailbox.Close()
	}
	if e.kv != nil {
		e.kv.Close()
	}
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

// emit tells the observers of an event of this process, and the other
// processes on the database.
func (e *Engine) emit(ev Event) {
	ev.At = e.now()
	e.tell(ev)
	if e.cluster != nil {
		e.cluster.announce(ev)
	}
}

// tell calls the observers with an event.
func (e *Engine) tell(ev Event) {
	e.obsMu.RLock()
	defer e.obsMu.RUnlock()
	for _, f := range e.observers {
		f(ev)
	}
}
