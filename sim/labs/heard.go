package labs

import (
	"context"
	"maps"
	"slices"

	"idemlab/sim"
	"idemlab/sim/store"
)

// Heard brings what this process keeps of a lab up to date with what
// another process on the database did to it; sim.EventStartOver, that it
// may have missed something, drops everything kept (StartOver).
// It fails when the database did not answer: what it keeps of the lab may
// then be behind.
func (r *Registry) Heard(ctx context.Context, ev sim.Event) error {
	switch ev.Kind {
	case sim.EventSettings, sim.EventLesson, sim.EventClock:
		return r.Reload(ctx, ev.Lab)
	case sim.EventReset:
		// The process that reset the lab emptied what lives outside the
		// database (shared Redis keys) itself. Heard here, maybe late,
		// only this process's memory goes: emptying them again would drop
		// keys taken since.
		err := r.Reload(ctx, ev.Lab)
		closeRooms(ctx, r.rooms, ev.Lab, Stale)
		return err
	case sim.EventGone:
		r.Drop(ctx, ev.Lab)
	case sim.EventStartOver:
		return r.StartOver(ctx)
	}
	return nil
}

// StartOver drops what this process keeps of every lab in memory (each
// room lets go of it, as Stale: cached answers, scenario codes) and reads
// each lab afresh: another process may have changed any of them unheard.
// A lab not in memory is read afresh when next used anyway. A database
// that does not answer stops the reading at the first lab: one line in
// the log, not one per lab.
func (r *Registry) StartOver(ctx context.Context) error {
	r.mu.Lock()
	ids := slices.Collect(maps.Keys(r.m))
	r.mu.Unlock()
	for _, id := range ids {
		closeRooms(ctx, r.rooms, id, Stale)
	}
	for _, id := range ids {
		err := reload(ctx, r, id)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return ctx.Err()
		case store.IsUnavailable(err):
			r.log.Warn("reload the labs: the database does not answer", "labs", len(ids), "err", err)
			return err
		default:
			r.log.Warn("reload a lab", "lab", id, "err", err)
			return err
		}
	}
	return nil
}

// Reload reads a lab this process keeps in memory afresh.
func (r *Registry) Reload(ctx context.Context, id string) error {
	err := reload(ctx, r, id)
	if err != nil && ctx.Err() == nil {
		r.log.Warn("reload a lab", "lab", id, "err", err)
	}
	return err
}

// reload reads a lab r keeps in memory afresh, or lets it go when it is
// gone.
func reload(ctx context.Context, r *Registry, id string) error {
	r.mu.Lock()
	l, ok := r.m[id]
	r.mu.Unlock()
	if !ok {
		return nil // read when next used
	}
	st, err := scanState(r.store.QueryRow(ctx, stateQuery, id), id)
	switch {
	case sim.ErrorCode(err) == sim.ENotFound || err == nil && st.Kind == kindDoomed:
		r.Drop(ctx, id)
	case err != nil:
		return err
	default:
		l.publish(st)
	}
	return nil
}
