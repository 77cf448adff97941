package labs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/store"
)

// Janitor is the registry's housekeeping: what was used when, idle labs
// removed and let go from memory, the rooms' own sweeps.
type Janitor struct{ r *Registry }

// Janitor returns the registry's housekeeping.
func (r *Registry) Janitor() Janitor { return Janitor{r} }

// Run does the housekeeping every Config.SweepEvery of the registry's
// clock until ctx ends: its caller owns the goroutine.
func (j Janitor) Run(ctx context.Context) {
	r := j.r
	clock.Ticks(ctx, r.clock.NewTicker(r.cfg.SweepEvery), func() {
		if err := j.Sweep(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("housekeeping", "err", err)
		}
	})
}

// Sweep does the housekeeping once: writes when labs were last used,
// removes labs idle past Config.LabIdle, runs the rooms' own sweeps and
// lets idle labs go from memory. Of several processes on one database, the
// leader alone expires; each reads the database's clock and its count of
// labs afresh.
func (j Janitor) Sweep(ctx context.Context) error {
	r := j.r
	now := r.clock.Now()
	errs := []error{j.flushTouches(ctx, now)}
	if r.store.Lead(ctx) {
		errs = append(errs, j.expire(ctx, now))
		for _, room := range r.rooms {
			if sw, ok := room.(Sweeper); ok {
				errs = append(errs, sw.Sweep(ctx, now))
			}
		}
	}
	errs = append(errs, j.evict(ctx, now))
	if r.store.Postgres() {
		errs = append(errs, r.store.MeasureSkew(ctx, time.Now), recount(ctx, r))
	}
	return errors.Join(errs...)
}

// flushTouches writes touched_at of the labs used since it was last written.
// A lab held now (work running in it, a page open on it) is in use now: so
// says the database too, for every process that may expire it.
func (j Janitor) flushTouches(ctx context.Context, now time.Time) error {
	r := j.r
	type touch struct {
		l  *Lab
		at int64
	}
	var ts []touch
	r.mu.Lock()
	for _, l := range r.m {
		at := time.Unix(0, l.used.Load()).UnixMilli()
		if l.active.Load() > 0 {
			at = now.UnixMilli()
		}
		if at > l.touched.Load() {
			ts = append(ts, touch{l, at})
		}
	}
	r.mu.Unlock()
	if len(ts) == 0 {
		return nil
	}
	err := r.store.Write(ctx, func(tx *store.Tx) error {
		for _, t := range ts {
			if _, err := tx.Exec(`UPDATE labs SET touched_at = ?1 WHERE id = ?2 AND touched_at < ?1`, t.at, t.l.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write when labs were used: %w", err)
	}
	for _, t := range ts {
		t.l.touched.Store(t.at)
	}
	return nil
}

// expire removes the labs untouched for Config.LabIdle.
func (j Janitor) expire(ctx context.Context, now time.Time) error {
	r := j.r
	cutoff := now.Add(-r.cfg.LabIdle)
	idle, err := IDs(ctx, r.store, `SELECT id FROM labs WHERE touched_at < ? AND kind IN (?, ?) LIMIT 100`,
		cutoff.UnixMilli(), KindPrivate, KindCompare)
	if err != nil {
		return fmt.Errorf("find idle labs: %w", err)
	}
	var errs []error
	for _, id := range idle {
		r.mu.Lock()
		l, ok := r.m[id]
		inUse := ok && (l.active.Load() > 0 || l.used.Load() > cutoff.UnixNano())
		r.mu.Unlock()
		if inUse {
			continue // used since its last flush: the next flush says so
		}
		if err := r.Remove(ctx, id); err != nil && sim.ErrorCode(err) != sim.ENotFound {
			errs = append(errs, fmt.Errorf("remove idle lab %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// evict lets go from memory the labs unused for memIdle (or LabIdle, when
// shorter), with nothing running in them; their rooms let go of them too.
func (j Janitor) evict(ctx context.Context, now time.Time) error {
	r := j.r
	cutoff := now.Add(-min(memIdle, r.cfg.LabIdle)).UnixNano()
	var gone []string
	r.mu.Lock()
	for id, l := range r.m {
		if l.active.Load() == 0 && l.used.Load() < cutoff && l.touched.Load() >= time.Unix(0, l.used.Load()).UnixMilli() {
			delete(r.m, id)
			gone = append(gone, id)
		}
	}
	r.mu.Unlock()
	for _, id := range gone {
		closeRooms(ctx, r.rooms, id, Evicted) // the next message of the lab starts its consumer again
	}
	return nil
}
