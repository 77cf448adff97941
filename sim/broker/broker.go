// Package broker is the lab's message broker: NATS with JetStream, embedded in the process by default
// or reached by URL.
//
// Every lab has its own subject and its own durable consumer with explicit acks, so a handler that
// returns without acking sees the message again after the consumer's AckWait: the at-least-once
// delivery that idempotent handlers exist for. Publishing with a message id asks JetStream to drop a
// second copy within its duplicate window.
package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"idemlab/sim/outage"
)

// ErrClosed is returned by Publish, Consume and Remove once Close has been called.
var ErrClosed = errors.New("broker: closed")

// ErrDown is what Publish returns at once while the server does not answer (an external one, stopped
// or not reachable): the message stays in the caller's outbox, for a publish once it is back.
var ErrDown = errors.New("broker: the server does not answer")

// Config says which NATS to use and how the lab's stream is kept. On an external server the stream
// is kept on file, in that server's store.
type Config struct {
	URL        string        // an external NATS ("nats://127.0.0.1:4222"); "" runs one embedded in the process
	StoreDir   string        // the embedded server's JetStream store; "" keeps it in memory
	Stream     string        // the stream's name; "" means "IDEMLAB"
	Duplicates time.Duration // JetStream's duplicate window for Nats-Msg-Id; 0 means 2 minutes
	MaxAge     time.Duration // messages older are dropped; 0 means 24h
	MaxBytes   int64         // the stream's size bound; 0 means 256 MiB (file) / 64 MiB (memory)
	Logger     *slog.Logger  // nil: discard
}

// fileStorage reports whether the stream is kept on disk: always on an external server, which keeps
// its own store, and on the embedded one when it has a StoreDir.
func (c Config) fileStorage() bool { return c.URL != "" || c.StoreDir != "" }

// streamConfig is the stream every lab's subject belongs to, with the Config's defaults applied.
func (c Config) streamConfig() jetstream.StreamConfig {
	sc := jetstream.StreamConfig{
		Name:       c.Stream,
		Subjects:   []string{"idemlab.>"},
		Retention:  jetstream.LimitsPolicy,
		Discard:    jetstream.DiscardOld,
		Storage:    jetstream.MemoryStorage,
		Duplicates: c.Duplicates,
		MaxAge:     c.MaxAge,
		MaxBytes:   c.MaxBytes,
	}
	if sc.Name == "" {
		sc.Name = "IDEMLAB"
	}
	if sc.Duplicates == 0 {
		sc.Duplicates = 2 * time.Minute
	}
	if sc.MaxAge == 0 {
		sc.MaxAge = 24 * time.Hour
	}
	if c.fileStorage() {
		sc.Storage = jetstream.FileStorage
	}
	if sc.MaxBytes == 0 {
		sc.MaxBytes = 64 << 20
		if c.fileStorage() {
			sc.MaxBytes = 256 << 20
		}
	}
	return sc
}

// A Broker publishes the labs' messages and runs their consumers. It is safe for concurrent use.
type Broker struct {
	log    *slog.Logger
	stream jetstream.StreamConfig
	ns     *server.Server // the embedded server, nil for an external one
	tmpDir string         // the embedded server's throwaway store, removed by Close
	nc     *nats.Conn
	closed chan struct{} // closed when nc is
	js     jetstream.JetStream
	watch  *outage.Watch // logs each outage of an external server once
	ready  atomic.Bool   // the stream exists: made at start, or once the server first answers

	ctx    context.Context // ends when Close begins; every run's context derives from it
	cancel context.CancelFunc

	mu       sync.Mutex
	slots    map[string]*slot // by lab
	shut     bool
	running  atomic.Int64 // labs with a run
	shutOnce sync.Once
}

// Start connects to (or starts) NATS and makes sure the stream exists (subjects "idemlab.>"), created
// or updated. ctx bounds the stream's creation.
func Start(ctx context.Context, cfg Config) (*Broker, error) {
	b := &Broker{
		log:    cfg.Logger,
		stream: cfg.streamConfig(),
		closed: make(chan struct{}),
		slots:  make(map[string]*slot),
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	b.watch = outage.New(b.log, "broker", "flag", "-nats", "url", redacted(cfg.URL))
	b.ctx, b.cancel = context.WithCancel(context.Background())
	if err := b.connect(cfg); err != nil {
		b.Close()
		return nil, err
	}
	if !b.nc.IsConnected() { // an external server down: the lab starts all the same
		b.watch.Failed(errors.New("no server answers at the address"), downMeans)
		return b, nil
	}
	if err := b.ensureStream(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// What the lab does while the broker does not answer, as its log says.
const downMeans = "notify \"queue\" keeps its messages in the outbox until it does"

// redacted is a NATS URL as a log may show it: never its password.
func redacted(raw string) string {
	if raw == "" {
		return "embedded"
	}
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(unreadable)"
}

// up makes sure the server answers and the stream exists, before a publish or a consumer: ErrDown
// while it does not answer.
func (b *Broker) up(ctx context.Context) error {
	if !b.nc.IsConnected() {
		return ErrDown
	}
	if b.ready.Load() {
		return nil
	}
	return b.ensureStream(ctx)
}

// ensureStream creates the stream or brings an existing one to the Broker's configuration.
func (b *Broker) ensureStream(ctx context.Context) error {
	if _, err := b.js.CreateOrUpdateStream(ctx, b.stream); err != nil {
		return fmt.Errorf("broker: stream %s: %w", b.stream.Name, err)
	}
	b.ready.Store(true)
	return nil
}

// Healthy reports whether the connection is up (for /healthz).
func (b *Broker) Healthy() bool {
	return b.nc.IsConnected()
}

// Close stops every consumer, waits for running handlers to return (their ctx is cancelled), drains
// and closes the connection, and shuts the embedded server down (waiting for it). Safe to call twice.
func (b *Broker) Close() {
	b.shutOnce.Do(b.shutdown)
}

func (b *Broker) shutdown() {
	b.mu.Lock()
	b.shut = true
	slots := make([]*slot, 0, len(b.slots))
	for _, s := range b.slots {
		slots = append(slots, s)
	}
	b.mu.Unlock()

	// Cancel every handler at once, then wait for each to return.
	b.cancel()
	for _, s := range slots {
		s.mu.Lock()
		b.halt(s)
		s.gone = true
		s.mu.Unlock()
	}

	if b.nc != nil {
		b.drain()
	}
	if b.ns != nil {
		b.ns.Shutdown()
		b.ns.WaitForShutdown()
	}
	if b.tmpDir != "" {
		if err := os.RemoveAll(b.tmpDir); err != nil {
			b.log.Warn("broker: remove store", "dir", b.tmpDir, "err", err)
		}
	}
}
