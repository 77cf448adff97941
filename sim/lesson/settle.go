package lesson

import (
	"context"
	"time"

	"idemlab/sim"
	"idemlab/sim/events"
	"idemlab/sim/labs"
)

// recent is how many of a lab's newest messages a step's watch reads: far
// more than one step publishes.
const recent = 32

// effects are what a step causes after its own requests have answered:
// the "order placed" messages of its charges on their way through the
// broker, a redelivery after the consumer's crash and a copy published
// twice included, and their emails. The step answers once they have
// settled, so that its verdict is the lesson's outcome, not a moment of it.
type effects struct {
	ls     *Lessons
	l      *labs.Lab
	sub    *events.Sub
	before map[string]bool // the lab's messages before the step
	dedup  bool            // publish_dedup as the step ran: the broker drops a second copy
	wait   time.Duration   // at most, on the lab's clock
}

// watch starts watching the effects of step a before it runs; nil when
// the step can cause none that come later (no queue, or no charge).
func (ls *Lessons) watch(ctx context.Context, l *labs.Lab, a sim.Action) (*effects, error) {
	s := l.Settings()
	switch {
	case ls.notify == nil || !ls.notify.Queues() || s.Notify != sim.NotifyQueue:
		return nil, nil
	case a.Kind != "charge" && a.Kind != "retry" && a.Kind != "race" && a.Kind != "direct":
		return nil, nil
	}
	// A redelivery comes an ack wait after the crash; past a few, or ten
	// seconds, the broker is not coming: the step answers as things stand,
	// and the page shows the rest live.
	ackWait := time.Duration(s.AckWaitMS) * time.Millisecond
	e := &effects{ls: ls, l: l, sub: ls.bus.Subscribe(64), before: map[string]bool{}, dedup: s.PublishDedup,
		wait: min(3*ackWait+2*time.Second, 10*time.Second)}
	ms, err := ls.notify.Messages(ctx, l, recent)
	if err != nil {
		e.sub.Close()
		return nil, err
	}
	for _, m := range ms {
		e.before[m.ID] = true
	}
	return e, nil
}

// stop ends the watch of a step that did not run.
func (e *effects) stop() {
	if e != nil {
		e.sub.Close()
	}
}

// settle waits until the step's effects have settled, or e.wait has passed
// on the lab's clock, then ends the watch. It looks again at each event of
// the lab, and every 100 ms besides.
func (e *effects) settle(ctx context.Context) error {
	if e == nil {
		return nil
	}
	defer e.sub.Close()
	clk := e.ls.labs.Config().Clock
	limit := clk.NewTimer(e.wait)
	defer limit.Stop()
	tick := clk.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if done, err := e.done(ctx); done || err != nil {
			return err
		}
		if !e.next(ctx, limit.C(), tick.C()) {
			return ctx.Err()
		}
	}
}

// next waits for a reason to look again: an event of the lab (or lost
// ones), or the tick; false when the wait is over.
func (e *effects) next(ctx context.Context, limit, tick <-chan time.Time) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-limit:
			return false
		case <-tick:
			return true
		case ev, ok := <-e.sub.Events():
			if !ok || ev.Lab == e.l.ID || ev.Kind == sim.EventStartOver {
				return ok
			}
		}
	}
}

// done reports whether the step's effects have settled: nothing of the
// lab's email path under way, and every message the step published
// delivered to the end, each copy the broker keeps.
func (e *effects) done(ctx context.Context) (bool, error) {
	// The messages first, then what is under way: a delivery seen here
	// wrote its email to the outbox in its own transaction, so the second
	// read sees that email unsent until the mailbox has it. (The other way
	// round, a delivery recorded between the two reads would pass unseen.)
	ms, err := e.ls.notify.Messages(ctx, e.l, recent)
	if err != nil {
		return false, err
	}
	open, _, err := e.ls.notify.Unsettled(ctx, e.l)
	if err != nil || open > 0 {
		return false, err
	}
	for _, m := range ms {
		if e.before[m.ID] {
			continue
		}
		if m.Published == 0 {
			return false, nil // the relay has not recorded it yet: a copy may be on its way
		}
		// The fate says how many copies the relay publishes (it records
		// them after the last, while the first may be delivered already).
		copies := 1
		if m.Fate == sim.DeliveryDuplicatePublish && !e.dedup {
			copies = max(m.Published, 2)
		}
		through := 0
		for _, d := range m.Deliveries {
			if d.Outcome != sim.DeliveryCrashed {
				through++
			}
		}
		if through < copies {
			return false, nil
		}
	}
	return true, nil
}
