// Package keys is the lab's key-value store for protection "set-nx": a
// server speaking the Redis protocol, embedded in the process by default
// (miniredis on a free loopback port, reached over TCP like any Redis, and
// only with a password made at each start), or a real Redis by URL, with
// the URL's own credentials. The guard is one atomic command, SET key
// value NX PX.
//
// A store that does not answer is told truthfully: a SET that was sent and
// never answered may still land, so the store owes it back (owed.go) and
// gives it back as soon as it answers, before any other SET NX of the key.
package keys

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"idemlab/sim/outage"
)

// Config says which Redis to use.
type Config struct {
	URL    string // redis://host:6379/0 (-redis); "" runs one embedded in the process
	Logger *slog.Logger
	// Given is told when a give-back owed to the store ran at last (the
	// store answered again): the lab's key is free for a retry.
	Given func(lab, key string)
	// MaxOwed bounds the give-backs the store may owe at once (default
	// 10,000): past it a new SET NX is refused before it is sent.
	MaxOwed int
	// Timeout is how long a command may wait for the store, all in (a SET
	// NX of a charge, a give-back); 0 means 2 s.
	Timeout time.Duration
}

// Store is the connection to the key-value store, and the embedded server
// when there is one.
type Store struct {
	rdb      *redis.Client
	embedded *miniredis.Miniredis
	watch    *outage.Watch // logs each outage once
	owed     *owedList
	given    func(lab, key string)
	timeout  time.Duration   // Config.Timeout
	ctx      context.Context // ends at Close: the embedded store's clock, the owed give-backs
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// tick is how often the embedded store's TTLs are moved on with real time.
// (miniredis's own ClockTTL checks every key, sorted, on every command: a
// cost that grows with every lab's keys. Once a second it is paid once.)
const tick = time.Second

// opTimeout is how long a command may wait for the store, unless
// Config.Timeout says otherwise.
const opTimeout = 2 * time.Second

// ErrDown says the store did not answer: its caller answers 503.
var ErrDown = errors.New("keys: the key-value store did not answer")

// What a store that does not answer means for the lab, as its log says.
const downMeans = "protection set-nx answers 503 until it does"

// quiet silences go-redis's own logger, once per process: it is global to
// the package, and its raw lines ("connection pool: failed to dial …")
// would repeat at every request; the store's watch says it once.
var quiet sync.Once

type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}

// Start connects to (or starts) the store. A real Redis that does not
// answer at start does not stop the lab: the log says so once, set-nx
// answers 503 meanwhile, and the store is used as soon as it answers.
func Start(ctx context.Context, cfg Config) (*Store, error) {
	quiet.Do(func() { redis.SetLogger(silent{}) })
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxOwed <= 0 {
		cfg.MaxOwed = 10_000
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = opTimeout
	}
	s := &Store{owed: newOwedList(cfg.MaxOwed), given: cfg.Given, timeout: cfg.Timeout}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	var opts *redis.Options
	if cfg.URL == "" {
		pw, err := password()
		if err != nil {
			return nil, err
		}
		m := miniredis.NewMiniRedis()
		m.RequireAuth(pw) // another local user finds the port, not the password
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("keys: start the embedded store: %w", err)
		}
		s.embedded = m
		s.wg.Go(s.clock)
		opts = &redis.Options{Addr: m.Addr(), Password: pw}
		s.watch = outage.New(cfg.Logger, "redis", "store", "embedded")
	} else {
		o, err := redis.ParseURL(cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("keys: -redis: %w", err)
		}
		opts = o
		s.watch = outage.New(cfg.Logger, "redis", "flag", "-redis", "url", redacted(cfg.URL))
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = s.timeout, s.timeout, s.timeout
	opts.ContextTimeoutEnabled = true // a new connection's hand-shake counts in the command's time
	// No retries: a command sent twice could land twice, and a give-back
	// must know that the one SET it owes is the only one.
	opts.MaxRetries = -1
	// One dial a command: a store that refuses connections is down, and a
	// charge is answered so at once, not after go-redis's five tries.
	opts.DialerRetries = 1
	s.rdb = redis.NewClient(opts)
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		if s.embedded != nil {
			s.Close()
			return nil, fmt.Errorf("keys: the embedded store: %w", err)
		}
		s.watch.Failed(err, downMeans)
	}
	s.wg.Go(s.settle)
	return s, nil
}

// password is a new random password for the embedded store.
func password() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("keys: password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// redacted is a Redis URL as a log may show it: never its password.
func redacted(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(unreadable)"
}

// failed records an error of the store in its watch, and returns it as
// ErrDown.
func (s *Store) failed(err error) error {
	s.watch.Failed(err, downMeans)
	return fmt.Errorf("%w: %v", ErrDown, err)
}

// Key is where a lab's idempotency key lives: idem:{lab}:{key}.
func Key(lab, key string) string { return "idem:" + lab + ":" + key }

// index is the lab's list of the keys it has set, newest last (score: unix
// ms when set): the keys panel, the clock and the reset reach the lab's keys
// through it, never by a scan of every lab's.
func index(lab string) string { return "idemlab-keys:" + lab }

// Bounds of a lab's index: how many keys it remembers, and how long it
// outlives its newest key.
const (
	maxIndex  = 2000
	trimSlack = 256 // the index is trimmed back to maxIndex once it is this much over
	indexLife = 31 * 24 * time.Hour
)

// Healthy reports whether the store answers.
func (s *Store) Healthy(ctx context.Context) bool {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		s.watch.Failed(err, downMeans)
		return false
	}
	s.ok()
	return true
}

// clock moves the embedded store's TTLs on with real time, as a Redis
// counts them down, until Close.
func (s *Store) clock() {
	t := time.NewTicker(tick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			s.embedded.FastForward(now.Sub(last))
			last = now
		}
	}
}

// Close stops the give-backs still owed (they are given up: the keys
// expire by their TTL), closes the connection and stops the embedded
// server.
func (s *Store) Close() {
	s.cancel()
	s.wg.Wait()
	if s.rdb != nil {
		s.rdb.Close()
	}
	if s.embedded != nil {
		s.embedded.Close()
	}
}
