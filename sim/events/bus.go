// Package events carries what happens in the labs to whoever follows it:
// the live pages, the other processes on the database. Publishing never
// blocks: each subscriber has a bounded buffer of its own, and one that
// falls behind far enough to overflow it is not skipped silently but told
// to start over (sim.EventStartOver), and reads everything afresh.
package events

import (
	"sync"
	"time"

	"idemlab/sim"
)

// Bus delivers every event published to every subscriber, in the order
// they were published.
type Bus struct {
	now func() time.Time

	mu   sync.Mutex
	subs map[*Sub]struct{}
}

// New returns a bus that stamps events with now.
func New(now func() time.Time) *Bus {
	return &Bus{now: now, subs: map[*Sub]struct{}{}}
}

// Publish stamps ev with the time, unless it has one, and hands it to every
// subscriber, without waiting for any.
func (b *Bus) Publish(ev sim.Event) {
	if ev.At.IsZero() {
		ev.At = b.now()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.put(ev)
	}
}

// Subscribe returns a subscription holding at most size events not yet read.
func (b *Bus) Subscribe(size int) *Sub {
	s := &Sub{bus: b, ch: make(chan sim.Event, max(size, 2))}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Sub is one subscriber's events.
type Sub struct {
	bus  *Bus
	ch   chan sim.Event
	lost int // events dropped by overflows, for the subscriber's log
}

// Events is where the subscriber reads; it closes when the subscription does.
func (s *Sub) Events() <-chan sim.Event { return s.ch }

// Lost is how many events the subscriber has missed in all.
func (s *Sub) Lost() int {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	return s.lost
}

// Close ends the subscription.
func (s *Sub) Close() {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	if _, ok := s.bus.subs[s]; ok {
		delete(s.bus.subs, s)
		close(s.ch)
	}
}

// put gives ev to the subscriber; when its buffer is full, it drops what
// the subscriber has not read and tells it to start over. The bus's lock
// is held: puts never interleave, so there is room after the drain.
func (s *Sub) put(ev sim.Event) {
	select {
	case s.ch <- ev:
		return
	default:
	}
	for drained := false; !drained; {
		select {
		case old := <-s.ch:
			if old.Kind != sim.EventStartOver { // the notice itself is no event missed
				s.lost++
			}
		default:
			drained = true
		}
	}
	s.lost++
	s.ch <- sim.Event{Kind: sim.EventStartOver, At: ev.At}
}
