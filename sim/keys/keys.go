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
	stop     chan struct{} // ends the embedded store's clock
	done     chan struct{}
}

// tick is how often the embedded store's TTLs are moved on with real time.
// (miniredis's own ClockTTL checks every key, sorted, on every command: a
// cost that grows with every lab's keys. Once a second it is paid once.)
const tick = time.Second

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
		s.embedded, s.stop, s.done = m, make(chan struct{}), make(chan struct{})
		go s.clock()
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

// SetNX takes the lab's key with the value for ttl when it is free: true
// when taken, false when it was already there. The guard is the one atomic
// SET … NX PX; the index is written in the same round trip. A store that does
// not answer is ErrDown.
func (s *Store) SetNX(ctx context.Context, lab, key, value string, ttl time.Duration, now time.Time) (bool, error) {
	k := Key(lab, key)
	var (
		set  *redis.StatusCmd
		size *redis.IntCmd
	)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		set = p.SetArgs(ctx, k, value, redis.SetArgs{Mode: "NX", TTL: ttl})
		p.ZAdd(ctx, index(lab), redis.Z{Score: float64(now.UnixMilli()), Member: k})
		p.PExpire(ctx, index(lab), indexLife)
		size = p.ZCard(ctx, index(lab))
		return nil
	})
	if size.Val() > maxIndex+trimSlack {
		// Now and then, not on every key: trimming sorts the index.
		s.rdb.ZRemRangeByRank(ctx, index(lab), 0, -maxIndex-1) // best effort: the next key trims again
	}
	switch {
	case errors.Is(set.Err(), redis.Nil):
		return false, nil
	case set.Err() != nil:
		return false, fmt.Errorf("%w: %v", ErrDown, set.Err())
	case err != nil && !errors.Is(err, redis.Nil):
		return false, fmt.Errorf("%w: %v", ErrDown, err)
	}
	return true, nil
}

// giveBack deletes KEYS[1] when it still holds ARGV[1]: a key another
// request took since (after it expired) is not ours to delete.
var giveBack = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// GiveBack deletes the lab's key that SetNX took with the value, when it
// still holds that value: a charge that failed after its guard lets the
// retry charge. A store that does not answer is ErrDown.
func (s *Store) GiveBack(ctx context.Context, lab, key, value string) error {
	if err := giveBack.Run(ctx, s.rdb, []string{Key(lab, key)}, value).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("%w: %v", ErrDown, err)
	}
	return nil
}

// Entry is one key of a lab as the store has it now.
type Entry struct {
	Key string        // as the client sent it
	TTL time.Duration // left; 0 when the key is gone (expired), -1 when it has no expiry
}

// Keys lists the lab's newest `most` keys with the time each has left,
// newest first; a key that has expired is listed with TTL 0 until the index
// forgets it (it keeps the newest maxIndex keys, for indexLife).
func (s *Store) Keys(ctx context.Context, lab string, most int) ([]Entry, error) {
	ks, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: index(lab), Start: 0, Stop: int64(most - 1), Rev: true}).Result()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDown, err)
	}
	ttls := make([]*redis.DurationCmd, len(ks))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range ks {
			ttls[i] = p.PTTL(ctx, k)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDown, err)
	}
	prefix := Key(lab, "")
	out := make([]Entry, len(ks))
	for i, k := range ks {
		out[i] = Entry{Key: k[len(prefix):]}
		switch ttl := ttls[i].Val(); {
		case ttl > 0:
			out[i].TTL = ttl
		case ttl == -1: // no expiry: not ours, but say so
			out[i].TTL = -1
		}
	}
	return out, nil
}

// advance moves TTLs of the keys given forward by ARGV[1] ms, atomically: a
// key with less left than that expires now. It returns how many expired.
var advance = redis.NewScript(`
local d = tonumber(ARGV[1])
local n = 0
for _, k in ipairs(KEYS) do
  local t = redis.call('PTTL', k)
  if t > d then
    redis.call('PEXPIRE', k, t - d)
  elseif t >= 0 then
    redis.call('DEL', k)
    n = n + 1
  end
end
return n`)

// Advance moves the lab's clock forward by d for its keys: each key's TTL
// is shortened by d, in one atomic script (a real Redis's clock cannot be
// moved, so time is moved in the keys instead). It returns how many keys
// expired.
func (s *Store) Advance(ctx context.Context, lab string, d time.Duration) (int, error) {
	ks, err := s.rdb.ZRange(ctx, index(lab), 0, -1).Result()
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrDown, err)
	}
	if len(ks) == 0 {
		return 0, nil
	}
	n, err := advance.Run(ctx, s.rdb, ks, d.Milliseconds()).Int()
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrDown, err)
	}
	return n, nil
}

// Forget deletes every key of the lab, and its index (its reset, its
// removal).
func (s *Store) Forget(ctx context.Context, lab string) error {
	ks, err := s.rdb.ZRange(ctx, index(lab), 0, -1).Result()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrDown, err)
	}
	if err := s.rdb.Del(ctx, append(ks, index(lab))...).Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrDown, err)
	}
	return nil
}

// Healthy reports whether the store answers.
func (s *Store) Healthy(ctx context.Context) bool { return s.rdb.Ping(ctx).Err() == nil }

// clock moves the embedded store's TTLs on with real time, as a Redis
// counts them down, until Close.
func (s *Store) clock() {
	defer close(s.done)
	t := time.NewTicker(tick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.embedded.FastForward(now.Sub(last))
			last = now
		}
	}
}

// Close closes the connection and stops the embedded server.
func (s *Store) Close() {
	if s.rdb != nil {
		s.rdb.Close()
	}
	if s.embedded != nil {
		close(s.stop)
		<-s.done
		s.embedded.Close()
	}
}
