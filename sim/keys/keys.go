// Package keys is the lab's key-value store for protection "set-nx": a
// server speaking the Redis protocol, embedded in the process by default
// (miniredis on a free loopback port, reached over TCP like any Redis), or
// a real Redis by URL. The guard is one atomic command, SET key value NX PX.
package keys

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Config says which Redis to use.
type Config struct {
	URL    string // redis://host:6379/0; "" runs one embedded in the process
	Logger *slog.Logger
}

// Store is the connection to the key-value store, and the embedded server
// when there is one.
type Store struct {
	rdb      *redis.Client
	embedded *miniredis.Miniredis
}

// ErrDown says the store did not answer: its caller answers 503.
var ErrDown = errors.New("keys: the key-value store did not answer")

// Start connects to (or starts) the store and checks that it answers.
func Start(ctx context.Context, cfg Config) (*Store, error) {
	s := &Store{}
	var opts *redis.Options
	if cfg.URL == "" {
		m := miniredis.NewMiniRedis()
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("keys: start the embedded store: %w", err)
		}
		s.embedded = m
		opts = &redis.Options{Addr: m.Addr()}
	} else {
		o, err := redis.ParseURL(cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("keys: %w", err)
		}
		opts = o
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = 2*time.Second, 2*time.Second, 2*time.Second
	opts.MaxRetries = 1
	s.rdb = redis.NewClient(opts)
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		s.Close()
		return nil, fmt.Errorf("keys: %w", err)
	}
	return s, nil
}

// Key is where a lab's idempotency key lives: idem:{lab}:{key}.
func Key(lab, key string) string { return "idem:" + lab + ":" + key }

// SetNX takes the key with the value for ttl when it is free: true when
// taken, false when it was already there. A store that does not answer is
// ErrDown.
func (s *Store) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	_, err := s.rdb.SetArgs(ctx, key, value, redis.SetArgs{Mode: "NX", TTL: ttl}).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%w: %v", ErrDown, err)
	}
	return true, nil
}

// Forget deletes every key of the lab (its reset, its removal).
func (s *Store) Forget(ctx context.Context, lab string) error {
	iter := s.rdb.Scan(ctx, 0, "idem:"+lab+":*", 500).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			if err := s.rdb.Del(ctx, batch...).Err(); err != nil {
				return fmt.Errorf("%w: %v", ErrDown, err)
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrDown, err)
	}
	if len(batch) > 0 {
		if err := s.rdb.Del(ctx, batch...).Err(); err != nil {
			return fmt.Errorf("%w: %v", ErrDown, err)
		}
	}
	return nil
}

// Healthy reports whether the store answers.
func (s *Store) Healthy(ctx context.Context) bool { return s.rdb.Ping(ctx).Err() == nil }

// Close closes the connection and stops the embedded server.
func (s *Store) Close() {
	if s.rdb != nil {
		s.rdb.Close()
	}
	if s.embedded != nil {
		s.embedded.Close()
	}
}
