package keys

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"

	"idemlab/sim"
)

// The ways Take fails, besides ErrDown (nothing was taken: the SET was
// never sent, or the store refused it).
var (
	// ErrUnknown: the SET was sent and no answer came, so it may land yet.
	// The store owes it back: it deletes the key if it holds this
	// attempt's value as soon as the store answers, and before any other
	// SET NX of the key in this process. Nothing was charged.
	ErrUnknown = fmt.Errorf("%w in time: the SET may land yet, and is owed back", ErrDown)
	// ErrOwedFull: the store already owes as many give-backs as it may
	// remember; the SET was not sent.
	ErrOwedFull = fmt.Errorf("%w for long: too many keys are owed back to it", ErrDown)
)

// Hold is a key Take took for a charge. The charge keeps it when its
// payment committed (or when the server died before: lesson 12's lost
// charge), or gives it back when it knows the charge failed.
type Hold struct {
	s               *Store
	lab, key, value string
	ttl             time.Duration
	done            bool
}

// Take takes the lab's key for a charge with SET … NX PX ttl: a Hold when
// taken, nil when the key was there already (a duplicate). The value is
// the request's fingerprint and a token of this attempt alone, so that
// only this attempt's key is ever given back. Give-backs the store owes
// for the key run first, in the same atomic script as the SET; when they
// cannot run, neither does the SET. now scores the key in the lab's index.
func (s *Store) Take(ctx context.Context, lab, key, fingerprint string, ttl time.Duration, now time.Time) (*Hold, error) {
	if !s.owed.reserve() {
		return nil, ErrOwedFull
	}
	h := &Hold{s: s, lab: lab, key: key, value: fingerprint + " " + sim.NewToken(), ttl: ttl}
	ghosts := s.owed.values(lab, key)
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	taken, freed, size, err := s.setNX(ctx, h, ghosts, now)
	if err != nil {
		s.watch.Failed(err, downMeans)
		if !sent(err) {
			s.owed.release()
			return nil, fmt.Errorf("%w: %v", ErrDown, err)
		}
		s.owe(h, false)
		return nil, fmt.Errorf("%w: %v", ErrUnknown, err)
	}
	s.ok()
	if len(ghosts) > 0 {
		s.answered(lab, key, ghosts, freed)
	}
	if size > maxIndex+trimSlack {
		// Now and then, not on every key: trimming sorts the index.
		s.rdb.ZRemRangeByRank(ctx, index(lab), 0, -maxIndex-1) // best effort: the next key trims again
	}
	if !taken {
		s.owed.release()
		return nil, nil
	}
	return h, nil
}

// sent reports whether a command that failed with err may have reached the
// store: everything but a connection never made.
func sent(err error) bool {
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial", errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrClosed):
		return false
	}
	return true
}

// setNX sends the guard: the SET NX and the index in one round trip, or,
// when give-backs are owed for the key (ghosts), the script that runs them
// first. freed is the ghost given back (1-based; 0: none).
func (s *Store) setNX(ctx context.Context, h *Hold, ghosts []string, now time.Time) (taken bool, freed int, size int64, err error) {
	k, ix := Key(h.lab, h.key), index(h.lab)
	if len(ghosts) > 0 {
		args := append([]any{h.value, h.ttl.Milliseconds(), now.UnixMilli(), indexLife.Milliseconds()}, toAny(ghosts)...)
		r, err := takeOwed.Run(ctx, s.rdb, []string{k, ix}, args...).Int64Slice()
		switch {
		case err != nil:
			return false, 0, 0, fmt.Errorf("set-nx after give-backs: %w", err)
		case len(r) != 3:
			return false, 0, 0, fmt.Errorf("set-nx after give-backs: the script answered %v", r)
		}
		return r[0] == 1, int(r[1]), r[2], nil
	}
	var (
		set *redis.StatusCmd
		n   *redis.IntCmd
	)
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		set = p.SetArgs(ctx, k, h.value, redis.SetArgs{Mode: "NX", TTL: h.ttl})
		p.ZAdd(ctx, ix, redis.Z{Score: float64(now.UnixMilli()), Member: k})
		p.PExpire(ctx, ix, indexLife)
		n = p.ZCard(ctx, ix)
		return nil
	})
	switch {
	case errors.Is(set.Err(), redis.Nil):
		return false, 0, n.Val(), nil
	case set.Err() != nil:
		return false, 0, 0, set.Err()
	case err != nil && !errors.Is(err, redis.Nil):
		return false, 0, 0, err
	}
	return true, 0, n.Val(), nil
}

func toAny(vs []string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// takeOwed gives back KEYS[1] when it holds one of the values owed back
// (ARGV[5…]), then takes it (SET NX PX) and indexes it, atomically: a late
// SET of a failed attempt can land before the script, and is given back,
// or after it, and finds the key taken. It returns {taken, the value given
// back (1-based, 0: none), the index's size}.
var takeOwed = redis.NewScript(`
local freed = 0
local cur = redis.call('GET', KEYS[1])
if cur then
  for i = 5, #ARGV do
    if cur == ARGV[i] then
      redis.call('DEL', KEYS[1])
      freed = i - 4
      break
    end
  end
end
local ok = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
local taken = 0
if ok then taken = 1 end
return {taken, freed, redis.call('ZCARD', KEYS[2])}`)

// giveBack deletes KEYS[1] when it still holds ARGV[1]: a key another
// request took since (after it expired) is not ours to delete. 1: deleted.
var giveBack = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// Keep keeps the key: the charge's payment committed, or the server died
// before it could (the key stays until its TTL: the lost charge).
func (h *Hold) Keep() {
	if !h.done {
		h.done = true
		h.s.owed.release()
	}
}

// GiveBack deletes the key the charge took, when it still holds this
// attempt's value: the charge failed, and the retry must charge. It
// reports whether that is done now; when the store does not answer, the
// store owes it, and gives it back as soon as it answers (before any other
// SET NX of the key).
func (h *Hold) GiveBack(ctx context.Context) (now bool) {
	if h.done {
		return true
	}
	h.done = true
	ctx, cancel := context.WithTimeout(ctx, h.s.timeout)
	defer cancel()
	err := giveBack.Run(ctx, h.s.rdb, []string{Key(h.lab, h.key)}, h.value).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		h.s.watch.Failed(err, downMeans)
		h.s.owe(h, true)
		return false
	}
	h.s.ok()
	h.s.owed.release()
	return true
}
