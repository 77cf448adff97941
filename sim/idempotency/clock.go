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
func (k *Keys) Advance(ctx context.Context, l *labs.Lab, seconds int64) (time.Time, error) {
	if seconds < 1 || seconds > sim.MaxClockAdvance {
		return time.Time{}, sim.Invalid(sim.Broke("advance_s", "range", 1, sim.MaxClockAdvance))
	}
	d := time.Duration(seconds) * time.Second
	if k.kv != nil {
		if _, err := k.kv.Advance(ctx, l.ID, d); err != nil {
			if l.Settings().Protection == sim.ProtectSetNX {
				return time.Time{}, sim.Busy("kv", 5*time.Second, "kv-down")
			}
			k.log.Warn("clock: the key-value store's keys stay as they are", "lab", l.ID, "err", err)
		}
	}
	_, next, err := k.labs.Change(ctx, l, func(tx *store.Tx, _ labs.State) error {
		if _, err := tx.Exec(`UPDATE labs SET clock_ms = clock_ms + ? WHERE id = ?`, d.Milliseconds(), l.ID); err != nil {
			return err
		}
		return k.labs.Record(tx, l.ID, sim.Action{Kind: "clock", N: int(seconds)})
	})
	if err != nil {
		return time.Time{}, labs.Failed(l.ID, "clock: advance "+l.ID, err)
	}
	k.cache.forget(l.ID) // remembered answers expire by the lab's clock: read them afresh
	k.bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventClock})
	return k.clock.Now().Add(next.Clock), nil
}
