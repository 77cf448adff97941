package labs

import (
	"context"
	"sync/atomic"
	"time"

	"idemlab/sim"
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

// Limits are the server's limits on simulated requests in flight: across
// all labs, per client address, and per lab.
type Limits struct {
	inFlight  slots   // across all labs
	perClient *shares // of one client address
	perLab    int64   // of one lab
}

// newLimits returns the limits of max requests in flight: a quarter of it
// for one client address and for one lab, and never less than two races
// need.
func newLimits(most int) *Limits {
	share := max(int64(most)/4, 2*sim.MaxRace)
	return &Limits{inFlight: slots{max: int64(most)}, perClient: newShares(share), perLab: share}
}

// InFlight is how many simulated requests are in flight now, across all labs.
func (lim *Limits) InFlight() int64 { return lim.inFlight.used.Load() }

// Clients is how many client addresses have simulated requests in flight now.
func (lim *Limits) Clients() int { return lim.perClient.holding() }

// Grant is a reservation of in-flight slots in the server and in one lab.
// Each copy of a request that goes out turns one reserved slot into one in
// use, given back when the server's answer (or the loss) is known, which may
// be after the operation has returned; reserved slots never used go back
// when the operation is done.
type Grant struct {
	lim    *Limits
	l      *Lab
	client string // the client address the work is for (WithClient), or ""
	unused atomic.Int64
}

// Occupy reserves n slots for work in the lab, for the client address ctx
// carries (WithClient), and keeps the lab in memory while the work runs;
// done ends both. Past a server-wide limit it answers EBusy, past the
// client's share ELimited: the work is refused before anything of it is
// written.
func (lim *Limits) Occupy(ctx context.Context, l *Lab, n int) (g *Grant, done func(), err error) {
	g = &Grant{lim: lim, l: l, client: ClientOf(ctx)}
	if err := g.More(n); err != nil {
		return nil, nil, err
	}
	release := l.Hold()
	return g, func() { release(); g.done() }, nil
}

// More reserves n slots more, for the next attempt of a retry loop.
func (g *Grant) More(n int) error {
	k := int64(n)
	if !g.lim.inFlight.take(k) {
		return sim.Busy("max-inflight", time.Second, "max-inflight", g.lim.inFlight.max)
	}
	if !g.lim.perClient.take(g.client, k) {
		g.lim.inFlight.give(k)
		return sim.Limited("inflight-per-address", time.Second, "inflight-per-address", g.lim.perClient.max)
	}
	if !g.l.inFlight.take(k) {
		g.lim.inFlight.give(k)
		g.lim.perClient.give(g.client, k)
		return sim.Busy("max-inflight", time.Second, "max-inflight-lab", g.l.inFlight.max)
	}
	g.unused.Add(k)
	return nil
}

// Use turns one reserved slot into one in use, for one copy of a request;
// the function returned gives it back when the copy's fate is known.
func (g *Grant) Use() (release func()) {
	if g.unused.Add(-1) < 0 { // more copies than reserved: a bug, but never a lost slot
		g.unused.Add(1)
		g.lim.inFlight.used.Add(1)
		g.lim.perClient.force(g.client, 1)
		g.l.inFlight.used.Add(1)
	}
	return func() {
		g.lim.inFlight.give(1)
		g.lim.perClient.give(g.client, 1)
		g.l.inFlight.give(1)
	}
}

// done gives back the slots reserved and never used.
func (g *Grant) done() {
	if n := g.unused.Swap(0); n > 0 {
		g.lim.inFlight.give(n)
		g.lim.perClient.give(g.client, n)
		g.l.inFlight.give(n)
	}
}
