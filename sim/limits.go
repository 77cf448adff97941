package sim

import (
	"sync/atomic"
	"time"
)

// slots counts simulated requests in flight against a maximum.
type slots struct {
	used atomic.Int64
	max  int64
}

// take takes n slots, all or none.
func (s *slots) take(n int64) bool {
	for {
		u := s.used.Load()
		if u+n > s.max {
			return false
		}
		if s.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

func (s *slots) give(n int64) { s.used.Add(-n) }

// InFlight is how many simulated requests are in flight now, across all labs.
func (e *Engine) InFlight() int64 { return e.inFlight.used.Load() }

// grant is a reservation of in-flight slots in the server and in one lab.
// Each copy of a request that goes out turns one reserved slot into one in
// use, given back when the server's answer (or the loss) is known, which may
// be after the operation has returned; reserved slots never used go back
// when the operation is done.
type grant struct {
	e      *Engine
	l      *Lab
	unused atomic.Int64
}

// reserve takes n slots in the server and in the lab, or answers EBusy: the
// work is refused before anything of it is written.
func (e *Engine) reserve(l *Lab, n int) (*grant, error) {
	g := &grant{e: e, l: l}
	if err := g.more(n); err != nil {
		return nil, err
	}
	return g, nil
}

// occupy reserves n slots for work in the lab, and keeps the lab in memory
// while the work runs; done ends both.
func (e *Engine) occupy(l *Lab, n int) (g *grant, done func(), err error) {
	if g, err = e.reserve(l, n); err != nil {
		return nil, nil, err
	}
	l.active.Add(1)
	return g, func() { l.active.Add(-1); g.done() }, nil
}

// more reserves n slots more, for the next attempt of a retry loop.
func (g *grant) more(n int) error {
	k := int64(n)
	if !g.e.inFlight.take(k) {
		return Busy("max-inflight", time.Second, "max-inflight", g.e.inFlight.max)
	}
	if !g.l.inFlight.take(k) {
		g.e.inFlight.give(k)
		return Busy("max-inflight", time.Second, "max-inflight-lab", g.l.inFlight.max)
	}
	g.unused.Add(k)
	return nil
}

// spawn runs one copy's delivery under the engine, on a reserved slot that
// goes back when the delivery ends.
func (g *grant) spawn(f func()) {
	if g.unused.Add(-1) < 0 { // more copies than reserved: a bug, but never a lost slot
		g.unused.Add(1)
		g.e.inFlight.used.Add(1)
		g.l.inFlight.used.Add(1)
	}
	g.e.spawn(func() {
		defer g.e.inFlight.give(1)
		defer g.l.inFlight.give(1)
		f()
	})
}

// done gives back the slots reserved and never used.
func (g *grant) done() {
	if n := g.unused.Swap(0); n > 0 {
		g.e.inFlight.give(n)
		g.l.inFlight.give(n)
	}
}
