package idempotency

import (
	"context"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// Advance moves the lab's clock forward by seconds, for expiry: the replay
// protection's records (their TTL and their lock) and the key-value store's
// keys alike. The store's keys move first, in one atomic script; a store
// that does not answer leaves everything as it was (503) when the lab
// guards with it, and is passed by otherwise. It returns the lab's time now.
// The clock runs at most sim.MaxClockOffset ahead in all: a move past it is
// refused, naming what is still possible, and nothing changes.
func (k *Keys) Advance(ctx context.Context, l *labs.Lab, seconds int64) (time.Time, error) {
	if seconds < 1 || seconds > sim.MaxClockAdvance {
		return time.Time{}, sim.Invalid(sim.Broke("advance_s", "range", 1, sim.MaxClockAdvance))
	}
	if err := clockRoom(l.Clock(), seconds); err != nil {
		return time.Time{}, err // before the key-value store's keys move
	}
	d := time.Duration(seconds) * time.Second
	if k.kv != nil {
		if _, err := k.kv.Advance(ctx, l.ID, d); err != nil {
			if l.Settings().Protection == sim.ProtectSetNX {
				return time.Time{}, sim.Unavailable(sim.PartKV, 5*time.Second, "kv-down")
			}
			k.log.Warn("clock: the key-value store's keys stay as they are", "lab", l.ID, "err", err)
		}
	}
	_, next, err := k.labs.Change(ctx, l, func(tx *store.Tx, cur labs.State) error {
		if err := clockRoom(cur.Clock, seconds); err != nil {
			return err // another move took the room meanwhile
		}
		if _, err := tx.Exec(`UPDATE labs SET clock_ms = clock_ms + ? WHERE id = ?`, d.Milliseconds(), l.ID); err != nil {
			return err
		}
		tx.Notify(sim.Event{Lab: l.ID, Kind: sim.EventClock}) // the others' expiry moves once it commits
		return k.labs.Record(tx, l.ID, sim.Action{Kind: "clock", N: int(seconds)})
	})
	if err != nil {
		return time.Time{}, labs.Failed(l.ID, "clock: advance "+l.ID, err)
	}
	k.cache.forget(l.ID) // remembered answers expire by the lab's clock: read them afresh
	k.bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventClock})
	return k.clock.Now().Add(next.Clock), nil
}

// clockRoom refuses a move of seconds that would take a clock already
// ahead by offset past sim.MaxClockOffset: with the range of moves still
// possible, or, when there is none, with the limit.
func clockRoom(offset time.Duration, seconds int64) error {
	left := sim.MaxClockOffset - int64(offset/time.Second)
	switch {
	case left < 1:
		return sim.Invalid(sim.Broke("advance_s", "clock-limit", sim.MaxClockYears))
	case seconds > left:
		return sim.Invalid(sim.Broke("advance_s", "range", 1, left))
	}
	return nil
}
