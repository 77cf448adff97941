package keys

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// The loop that runs the give-backs owed (owed.go), each when due, and
// all at once when the store answers again after an outage.

// ok says the store answered: after an outage, every give-back owed is
// tried at once, not at the end of its backoff.
func (s *Store) ok() {
	if !s.watch.Down() {
		return
	}
	s.watch.Ok()
	now := time.Now()
	s.owed.mu.Lock()
	for _, es := range s.owed.byKey {
		for _, e := range es {
			if e.absentAt.IsZero() {
				e.next, e.wait = now, firstWait
			}
		}
	}
	s.owed.mu.Unlock()
	s.owed.wake()
}

// wake tells the give-backs' loop to look again, without blocking.
func (o *owedList) wake() {
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// settle runs the give-backs owed, each when due, until Close.
func (s *Store) settle() {
	t := time.NewTimer(idle)
	defer t.Stop()
	for {
		t.Reset(s.settleDue(time.Now()))
		select {
		case <-s.ctx.Done():
			return
		case <-s.owed.kick:
		case <-t.C:
		}
	}
}

// settleDue tries each give-back due: the first the store does not answer
// puts off the others too (the store is down: one timeout, not one each).
// It returns how long until the next is due.
func (s *Store) settleDue(now time.Time) time.Duration {
	due, expired, next := s.owed.due(now, s.watch.Down())
	for _, e := range expired {
		if !e.told {
			s.tell(e)
		}
	}
	down := false
	for _, e := range due {
		deleted, err := false, error(nil)
		if !down {
			deleted, err = s.tryGiveBack(e)
		}
		now := time.Now()
		s.owed.mu.Lock()
		switch {
		case e.gone: // Take settled it meanwhile
		case down || err != nil:
			down = true
			s.owed.failed(e, now)
			next = min(next, e.wait)
		default:
			tell := s.owed.settled(e, deleted, now)
			if !e.gone {
				next = min(next, e.next.Sub(now))
			}
			s.owed.mu.Unlock()
			if tell {
				s.tell(e)
			}
			continue
		}
		s.owed.mu.Unlock()
	}
	return max(next, time.Millisecond)
}

// tryGiveBack runs e's give-back once.
func (s *Store) tryGiveBack(e *owed) (deleted bool, err error) {
	ctx, cancel := context.WithTimeout(s.ctx, tryTimeout)
	defer cancel()
	n, err := giveBack.Run(ctx, s.rdb, []string{Key(e.lab, e.key)}, e.value).Int()
	if err != nil && !errors.Is(err, redis.Nil) {
		if s.ctx.Err() == nil {
			s.watch.Failed(err, downMeans)
		}
		return false, err
	}
	s.ok()
	return n == 1, nil
}

// tell says that e's key is free again.
func (s *Store) tell(e *owed) {
	if s.given != nil {
		s.given(e.lab, e.key)
	}
}
