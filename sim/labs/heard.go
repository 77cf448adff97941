package labs

import (
	"context"

	"idemlab/sim"
)

// Heard brings what this process keeps of a lab up to date with what
// another process on the database did to it.
func (r *Registry) Heard(ctx context.Context, ev sim.Event) {
	switch ev.Kind {
	case sim.EventSettings, sim.EventLesson, sim.EventClock:
		r.Reload(ctx, ev.Lab)
	case sim.EventReset:
		r.Reload(ctx, ev.Lab)
		r.closeRooms(ctx, ev.Lab, Emptied)
	case sim.EventGone:
		r.Drop(ctx, ev.Lab)
	case sim.EventStartOver:
		r.ReloadAll(ctx)
	}
}

// Reload reads a lab this process keeps in memory afresh.
func (r *Registry) Reload(ctx context.Context, id string) {
	r.mu.Lock()
	l, ok := r.m[id]
	r.mu.Unlock()
	if !ok {
		return // read when next used
	}
	st, err := scanState(r.store.QueryRow(ctx, stateQuery, id), id)
	switch {
	case sim.ErrorCode(err) == sim.ENotFound || err == nil && st.Kind == kindDoomed:
		r.Drop(ctx, id)
	case err != nil:
		if ctx.Err() == nil {
			r.log.Warn("reload a lab", "lab", id, "err", err)
		}
	default:
		l.publish(st)
	}
}

// ReloadAll reads every lab this process keeps afresh.
func (r *Registry) ReloadAll(ctx context.Context) {
	r.mu.Lock()
	ids := make([]string, 0, len(r.m))
	for id := range r.m {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	for _, id := range ids {
		r.Reload(ctx, id)
	}
}
