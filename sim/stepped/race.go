package stepped

import (
	"context"
	"slices"
	"sync"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/labs"
	"idemlab/sim/ledger"
)

// Race is one stepped race: its racers, and what the page and the API show
// of it. Commands (Step, Run, Abort) take its turn, one at a time.
type Race struct {
	rs     *Races
	lab    *labs.Lab
	id     string
	turn   chan struct{}
	abort  chan struct{} // closed when it is aborted
	ended  chan struct{} // closed when every racer has its answer
	racers []*racer

	mu      sync.Mutex
	v       sim.SteppedRace
	free    bool          // Run: the racers stop no more
	changed chan struct{} // closed and replaced at every change
	idle    clock.Timer
	aborted sync.Once
	cmds    []sim.Action // the commands taken, for the lab's scenario
	flushed bool         // and written there
}

// Start begins a stepped race in the lab: n racers with the order and
// amount, under the lab's protection and key strategy, sent at once. It
// returns once each has stopped at its first point.
func (rs *Races) Start(ctx context.Context, l *labs.Lab, orderID string, amount int64, n int) (sim.SteppedRace, error) {
	if n < sim.MinRacers || n > sim.MaxRacers {
		return sim.SteppedRace{}, sim.Invalid(sim.Broke("racers", "range", sim.MinRacers, sim.MaxRacers))
	}
	if err := (sim.Charge{OrderID: orderID, Amount: amount}).Validate(); err != nil {
		return sim.SteppedRace{}, err
	}
	s := l.Settings()
	rc := &Race{rs: rs, lab: l, id: "sr-" + sim.NewToken()[:16], turn: make(chan struct{}, 1),
		abort: make(chan struct{}), ended: make(chan struct{}), changed: make(chan struct{})}
	rc.v = sim.SteppedRace{ID: rc.id, OrderID: orderID, Amount: amount, Protection: s.Protection, Postgres: rs.Store.Postgres(),
		Log: []sim.StepLog{}}
	points := ledger.Points(s.Protection, s.KeyStrategy != sim.KeyNone, rs.Store.Postgres())
	tokens := make([]string, n)
	for i := range n {
		tokens[i] = sim.NewToken()
		r := &racer{rc: rc, i: i, goCh: make(chan struct{}, 1), looks: make(chan chan []sim.Payment)}
		rc.racers = append(rc.racers, r)
		v := sim.Racer{Name: string(rune('A' + i)), Points: points, State: sim.RacerRunning, Sees: []sim.Payment{}}
		if len(points) > 0 {
			v.Next = points[0]
		}
		rc.v.Racers = append(rc.v.Racers, v)
	}
	if err := rs.claim(l, rc, tokens); err != nil {
		return sim.SteppedRace{}, err
	}
	op, hangUps, err := rs.Client.Racers(ctx, l, sim.OperationRequest{OrderID: orderID, Amount: amount}, tokens,
		sim.Action{Kind: "stepped", OrderID: orderID, Amount: amount, N: n}, rc.answered)
	if err != nil {
		rs.unclaim(l, rc, tokens)
		return sim.SteppedRace{}, err
	}
	rc.mu.Lock()
	rc.v.Operation = op.ID
	for i, r := range rc.racers {
		r.hangUp = hangUps[i]
	}
	rc.touch()
	rc.mu.Unlock()
	rc.settle(ctx)
	return rc.done(ctx), nil
}

// touch starts the race's idle time again: untouched for sim.SteppedIdle,
// it is aborted. An over race has none. rc.mu is held.
func (rc *Race) touch() {
	if rc.idle != nil {
		rc.idle.Stop()
	}
	if !rc.v.Over {
		rc.idle = rc.rs.Clock.AfterFunc(sim.SteppedIdle, func() { rc.abortAndWait(context.Background(), sim.AbortIdle) })
	}
}

// claim makes rc the lab's race, unless another still runs there.
func (rs *Races) claim(l *labs.Lab, rc *Race, tokens []string) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.closed {
		return errClosing
	}
	if old := rs.byLab[l.ID]; old != nil && !old.over() {
		return errBusy
	}
	if rs.most > 0 {
		running := 0
		for _, rc := range rs.byLab {
			if !rc.over() {
				running++
			}
		}
		if running >= rs.most {
			return errFull
		}
	}
	rs.byLab[l.ID] = rc
	for i, t := range tokens {
		rs.tokens[t] = rc.racers[i]
	}
	return nil
}

// unclaim forgets a race that could not start.
func (rs *Races) unclaim(l *labs.Lab, rc *Race, tokens []string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.byLab[l.ID] == rc {
		delete(rs.byLab, l.ID)
	}
	for _, t := range tokens {
		delete(rs.tokens, t)
	}
}

// view is a copy of what the race shows.
func (rc *Race) view() sim.SteppedRace {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	v := rc.v
	v.Racers = slices.Clone(v.Racers)
	for i := range v.Racers {
		v.Racers[i].Sees = slices.Clone(v.Racers[i].Sees)
	}
	v.Log = slices.Clone(v.Log)
	return v
}

func (rc *Race) over() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.v.Over
}

// change tells whoever waits for the race that it changed; rc.mu is held.
func (rc *Race) change() {
	close(rc.changed)
	rc.changed = make(chan struct{})
}

// answered records what racer i's client got: its answer, or nothing
// (it gave up waiting). A request the network never delivered is done.
func (rc *Race) answered(i int, a sim.Attempt) {
	r := rc.racers[i]
	rc.mu.Lock()
	v := &rc.v.Racers[i]
	r.returned = true
	v.Status, v.GaveUp = a.Status, a.Status == 0
	if a.Outcome == sim.OutcomeNotReached {
		r.finished, v.Outcome = true, a.Outcome
	}
	over := rc.settled(r)
	rc.mu.Unlock()
	rc.ending(over)
}

// settled marks r done once the server has finished with it and its
// client has stopped waiting, and reports whether the race is over now;
// rc.mu is held.
func (rc *Race) settled(r *racer) (over bool) {
	defer rc.change()
	if !r.finished || !r.returned {
		return false
	}
	v := &rc.v.Racers[r.i]
	v.State, v.Next, v.Waits = sim.RacerDone, "", ""
	over = true
	for _, x := range rc.v.Racers {
		over = over && x.State == sim.RacerDone
	}
	if !over || rc.v.Over {
		return false
	}
	rc.v.Over = true
	if rc.idle != nil {
		rc.idle.Stop()
	}
	close(rc.ended)
	return true
}

// ending lets go of an over race's tokens and tells the lab's pages.
func (rc *Race) ending(over bool) {
	if over {
		rc.rs.forget(rc)
		rc.rs.publish(rc.lab.ID)
	}
}

// forget lets go of the race's tokens whose requests never came.
func (rs *Races) forget(rc *Race) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for t, r := range rs.tokens {
		if r.rc == rc {
			delete(rs.tokens, t)
		}
	}
}
