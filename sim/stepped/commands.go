package stepped

import (
	"context"
	"strconv"
	"strings"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// How long a command waits for the racers to stop before it answers with
// them still running; and how often, on PostgreSQL, it asks whether a
// running racer waits for a lock.
const (
	settleWait = 10 * time.Second
	lockPoll   = 5 * time.Millisecond
)

// To says how far Step takes a racer.
const (
	ToNext = ""    // to its next point
	ToEnd  = "end" // until its answer, or until it waits for a lock
)

// Step advances the named racer of the lab's race id: it runs the
// statement at its next point, and the answer comes once it has stopped at
// the point after, finished, or waits for another's lock. A racer that is
// done, or waits, is left as it is.
func (rs *Races) Step(ctx context.Context, l *labs.Lab, id, name, to string) (sim.SteppedRace, error) {
	if to != ToNext && to != ToEnd {
		return sim.SteppedRace{}, sim.Invalid(sim.Broke("to", "one-of", `"", "end"`))
	}
	rc, err := rs.race(l, id)
	if err != nil {
		return sim.SteppedRace{}, err
	}
	r := rc.named(name)
	if r == nil {
		return sim.SteppedRace{}, sim.Invalid(sim.Broke("racer", "one-of", rc.names()))
	}
	release, err := rc.take(ctx)
	if err != nil {
		return sim.SteppedRace{}, err
	}
	defer release()
	rc.command(sim.Action{Kind: "step", Racer: name, To: to})
	for rc.advance(r) {
		rc.settle(ctx)
		if to != ToEnd || ctx.Err() != nil {
			break
		}
	}
	return rc.done(ctx), nil
}

// Run lets every racer of the race go on without stopping, and answers
// once all have their answers.
func (rs *Races) Run(ctx context.Context, l *labs.Lab, id string) (sim.SteppedRace, error) {
	rc, err := rs.race(l, id)
	if err != nil {
		return sim.SteppedRace{}, err
	}
	release, err := rc.take(ctx)
	if err != nil {
		return sim.SteppedRace{}, err
	}
	defer release()
	rc.command(sim.Action{Kind: "step", To: "run"})
	rc.mu.Lock()
	rc.free = true
	rc.mu.Unlock()
	for _, r := range rc.racers {
		rc.advance(r)
	}
	rc.wait(ctx, rc.ended)
	return rc.done(ctx), nil
}

// Abort aborts the lab's race id: its racers' transactions roll back, and
// their keys are left as free as before. It answers once all have ended.
func (rs *Races) Abort(ctx context.Context, l *labs.Lab, id string) (sim.SteppedRace, error) {
	rc, err := rs.race(l, id)
	if err != nil {
		return sim.SteppedRace{}, err
	}
	rc.command(sim.Action{Kind: "step", To: "abort"})
	rc.abortAndWait(ctx, sim.AbortAsked)
	return rc.done(ctx), nil
}

// command keeps a command of the race for the lab's scenario.
func (rc *Race) command(a sim.Action) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.cmds = append(rc.cmds, a)
}

// flush writes the race's commands as actions of the lab's scenario, once
// the race is over: then no racer's open transaction holds the lab's
// counters, which numbering an action takes. A link then steps its race
// the same way.
func (rc *Race) flush(ctx context.Context) {
	rc.mu.Lock()
	if !rc.v.Over || rc.flushed {
		rc.mu.Unlock()
		return
	}
	rc.flushed = true
	cmds := rc.cmds
	rc.mu.Unlock()
	err := rc.rs.Store.Write(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		for _, a := range cmds {
			if err := rc.rs.Labs.Record(tx, rc.lab.ID, a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !store.IsGone(err) {
		rc.rs.Log.Warn("stepped: record the race's steps", "lab", rc.lab.ID, "err", err)
	}
}

// take waits for the race's turn: one command at a time. A command
// touches the race: its idle time starts again.
func (rc *Race) take(ctx context.Context) (func(), error) {
	select {
	case rc.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	rc.mu.Lock()
	rc.touch()
	rc.mu.Unlock()
	return func() { <-rc.turn }, nil
}

// advance lets r run its next statement, when it stands at a point.
func (rc *Race) advance(r *racer) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	v := &rc.v.Racers[r.i]
	if v.State != sim.RacerReady {
		return false
	}
	v.State = sim.RacerRunning
	rc.change()
	r.goCh <- struct{}{}
	return true
}

// abortAndWait aborts the race, once, and waits for its racers to end.
func (rc *Race) abortAndWait(ctx context.Context, why string) {
	rc.aborted.Do(func() {
		rc.mu.Lock()
		if !rc.v.Over {
			rc.v.Aborted = why
			rc.change()
		}
		rc.mu.Unlock()
		close(rc.abort)
	})
	rc.wait(ctx, rc.ended)
	rc.flush(ctx)
	rc.rs.publish(rc.lab.ID)
}

// wait waits for ch to close, for settleWait at most.
func (rc *Race) wait(ctx context.Context, ch <-chan struct{}) {
	t := time.NewTimer(settleWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

// done refreshes what each stopped racer's transaction sees, tells the
// lab's pages, and returns the race as it stands.
func (rc *Race) done(ctx context.Context) sim.SteppedRace {
	for _, r := range rc.racers {
		r.refresh(ctx)
	}
	rc.flush(ctx)
	rc.rs.publish(rc.lab.ID)
	return rc.view()
}

func (rc *Race) named(name string) *racer {
	for i, v := range rc.v.Racers { // names never change
		if v.Name == name {
			return rc.racers[i]
		}
	}
	return nil
}

func (rc *Race) names() string {
	var ns []string
	for _, v := range rc.v.Racers {
		ns = append(ns, strconv.Quote(v.Name))
	}
	return strings.Join(ns, ", ")
}

// HangUp makes the named racer's client of the lab's race id give up
// waiting, as a client's timeout does: the server sees its request end,
// and the racer's charge is aborted at its point.
func (rs *Races) HangUp(l *labs.Lab, id, name string) error {
	rc, err := rs.race(l, id)
	if err != nil {
		return err
	}
	r := rc.named(name)
	if r == nil {
		return sim.Invalid(sim.Broke("racer", "one-of", rc.names()))
	}
	rc.mu.Lock()
	hangUp := r.hangUp
	rc.mu.Unlock()
	if hangUp != nil {
		hangUp()
	}
	return nil
}
