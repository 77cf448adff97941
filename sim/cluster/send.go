package cluster

import (
	"context"
	"errors"
	"strings"
	"time"

	"idemlab/sim"
	"idemlab/sim/store"
)

// notifyBatch is how many events go out in one statement at most.
const notifyBatch = 256

// gatherFor is how long the first event waiting to go out waits for
// others to go with it (real time: a matter of transport, not of the
// lab's clock). Each statement that notifies is a transaction of its own,
// which costs the database and every listening process far more than the
// events it carries: sent as they come, a stream of replays cost the
// database 25 µs of its CPU for each, four times the replay's own.
const gatherFor = 5 * time.Millisecond

// outgoing is how many events wait to go out at most: past it the others
// hear "start over" instead of the events lost.
const outgoing = 1024

// resend is how long a "start over" owed to the others waits before it is
// tried again, when no event comes to carry it.
const resend = time.Second

// send sends this process's live events to the others, as many as wait at
// once in one statement, in order, packed in as few notices as they fit in
// (each notice is work for the database and for every process that
// hears it). Events of other processes are not sent
// back, nor those told inside their own transactions (toldInTx). Events
// lost on their way out (more than the buffer holds: the bus says start
// over; or a send that failed) are never skipped silently: the others are
// told to start over, as soon as a send succeeds again.
func (c *Cluster) send() {
	batch := make([]string, 0, notifyBatch+1)
	owed := false // events were lost: the others must start over
	for {
		batch = batch[:0]
		if owed {
			batch = append(batch, string(c.event(sim.Event{Kind: sim.EventStartOver})))
		}
		var ok bool
		if batch, ok = c.gather(batch, owed); !ok {
			return
		}
		if len(batch) == 0 {
			continue
		}
		_, err := c.Store.Pool().Exec(c.ctx, `SELECT pg_notify('`+channel+`', p) FROM unnest($1::text[]) WITH ORDINALITY AS n(p, i) ORDER BY i`, c.pack(batch))
		owed = err != nil
		switch {
		case err == nil, errors.Is(err, context.Canceled):
		case store.IsUnavailable(err) && c.DB != nil: // once per outage, not per event
			c.DB.Failed(err, "live updates to other processes wait until it does; they start over then")
		default:
			c.Log.Warn("live updates to other processes: they start over once a send succeeds", "err", err)
		}
	}
}

// gather adds to batch the events waiting to go out: it waits for the
// first, but, while a start-over is owed, no longer than resend; then,
// once one is to go out, for those that come within c.Gather. It reports
// false when the cluster closes.
func (c *Cluster) gather(batch []string, owed bool) ([]string, bool) {
	var retry <-chan time.Time
	if owed {
		t := c.Clock.NewTimer(resend)
		defer t.Stop()
		retry = t.C()
	}
	select {
	case ev, ok := <-c.sub.Events():
		if !ok {
			return batch, false
		}
		batch = c.add(batch, ev)
	case <-retry:
		return batch, true
	}
	if len(batch) == 0 {
		return batch, true // nothing to send: no need to wait for more
	}
	wait := time.NewTimer(c.Gather)
	defer wait.Stop()
	for len(batch) < notifyBatch {
		select {
		case ev, ok := <-c.sub.Events():
			if !ok {
				return batch, false
			}
			batch = c.add(batch, ev)
		case <-wait.C:
			return batch, true
		}
	}
	return batch, true
}

// add appends the notice of a local live event to batch.
func (c *Cluster) add(batch []string, ev sim.Event) []string {
	if ev.Remote || toldInTx(ev.Kind) || !c.others.Load() {
		return batch
	}
	return append(batch, string(c.event(ev)))
}

// pack puts events (each as event makes it) in as few notices as they fit
// in, in order.
func (c *Cluster) pack(evs []string) []string {
	var (
		out []string
		b   strings.Builder
	)
	for _, ev := range evs {
		if b.Len() > 0 && b.Len()+len(ev)+len(",]}") > notifyMax {
			b.WriteString("]}")
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() == 0 {
			b.WriteString(c.own + `,"evs":[`)
		} else {
			b.WriteByte(',')
		}
		b.WriteString(ev)
	}
	if b.Len() > 0 {
		b.WriteString("]}")
		out = append(out, b.String())
	}
	return out
}
