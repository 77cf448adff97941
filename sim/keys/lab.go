package keys

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

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
		return nil, s.failed(err)
	}
	ttls := make([]*redis.DurationCmd, len(ks))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range ks {
			ttls[i] = p.PTTL(ctx, k)
		}
		return nil
	}); err != nil {
		return nil, s.failed(err)
	}
	s.ok()
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
		return 0, s.failed(err)
	}
	if len(ks) == 0 {
		s.ok()
		return 0, nil
	}
	n, err := advance.Run(ctx, s.rdb, ks, d.Milliseconds()).Int()
	if err != nil {
		return 0, s.failed(err)
	}
	s.ok()
	return n, nil
}

// Forget deletes every key of the lab, and its index (its reset, its
// removal).
func (s *Store) Forget(ctx context.Context, lab string) error {
	ks, err := s.rdb.ZRange(ctx, index(lab), 0, -1).Result()
	if err != nil {
		return s.failed(err)
	}
	if err := s.rdb.Del(ctx, append(ks, index(lab))...).Err(); err != nil {
		return s.failed(err)
	}
	s.ok()
	return nil
}
