package labs

import (
	"context"
	"fmt"

	"idemlab/sim"
	"idemlab/sim/store"
)

// A lab's life: made (Create, a scenario link, compare), loaded into memory
// when used (Lab), let go from memory when idle (evict), removed with
// everything in it when deleted or idle past Config.LabIdle (Remove), and
// mended after a crash (start).

// start makes the demo lab if missing, mends what a crash left behind
// (attempts that never ended, claims of the lab's own API held by the dead
// process, scenario labs half built, labs half removed) and counts the labs.
// Of several processes on one database, only one that starts alone mends:
// what looks unfinished to a process that joins others is theirs, running.
func start(ctx context.Context, r *Registry) error {
	if err := mend(ctx, r); err != nil {
		return err
	}
	if err := r.store.Join(ctx); err != nil {
		return err
	}
	return recount(ctx, r)
}

// recount reads how many labs the database holds.
func recount(ctx context.Context, r *Registry) error {
	var n int64
	if err := r.store.QueryRow(ctx, `SELECT COUNT(*) FROM labs`).Scan(&n); err != nil {
		return fmt.Errorf("labs: count: %w", err)
	}
	r.count.Store(n)
	return nil
}

// mend is start's first part: the demo lab, and what a crash left.
func mend(ctx context.Context, r *Registry) error {
	now := r.clock.Now()
	err := r.store.Write(ctx, func(tx *store.Tx) error {
		if _, err := r.insert(ctx, tx, sim.DemoLab, KindDemo, sim.DefaultSettings(), now, nil); err != nil {
			return err
		}
		if !r.store.Alone() {
			return nil
		}
		return mendCrash(tx, now.UnixMilli())
	})
	if err != nil {
		return fmt.Errorf("labs: start: %w", err)
	}
	if !r.store.Alone() {
		return nil
	}
	leftovers, err := IDs(ctx, r.store, `SELECT id FROM labs WHERE kind IN (?, ?)`, KindBuilding, kindDoomed)
	if err != nil {
		return fmt.Errorf("labs: start: %w", err)
	}
	for _, id := range leftovers {
		if err := r.purge(ctx, id); err != nil {
			return fmt.Errorf("labs: start: remove %s: %w", id, err)
		}
	}
	return nil
}

// mendCrash ends what was under way when the last run died: nothing is in
// flight in a process that has just started.
func mendCrash(tx *store.Tx, now int64) error {
	if _, err := tx.Exec(`
UPDATE attempts SET finished_at = ?, outcome = CASE outcome WHEN 'pending' THEN 'unknown' ELSE outcome END,
    error = COALESCE(error, 'client: the lab restarted before the answer came')
WHERE finished_at IS NULL`, now); err != nil {
		return err
	}
	// The lab's own API's claims held by the dead process go; the charges'
	// stay in flight until their lock times out, as a crash leaves them.
	if _, err := tx.Exec(`DELETE FROM idempotency_records WHERE state = 'in-flight' AND scope <> 'charges'`); err != nil {
		return err
	}
	// Whoever held an unsent email is gone with the last run: the mailer
	// may send it at once.
	_, err := tx.Exec(`UPDATE email_outbox SET claimed_at = 0 WHERE sent = 0 AND claimed_at > 0`)
	return err
}

// IDs runs a query of the store for lab ids.
func IDs(ctx context.Context, s *store.Store, query string, args ...any) ([]string, error) {
	rows, err := s.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// Delete removes a private lab and everything in it. The shared lab cannot
// be removed.
func (r *Registry) Delete(ctx context.Context, id string) error {
	if id == sim.DemoLab {
		return sim.Errorf(sim.EForbidden, "demo-delete", sim.DemoLab)
	}
	if _, err := r.Lab(ctx, id); err != nil {
		return err
	}
	return r.Remove(ctx, id)
}

// Remove takes the lab out of use at once (it answers 404 from then on),
// then deletes its rows a chunk at a time, then the lab.
func (r *Registry) Remove(ctx context.Context, id string) error {
	res, err := r.store.Exec(ctx, `UPDATE labs SET kind = ? WHERE id = ? AND kind <> ?`, kindDoomed, id, KindDemo)
	if err != nil {
		return fmt.Errorf("labs: remove %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return sim.NoLab(id) // removed meanwhile by another request
	}
	r.Drop(ctx, id)
	r.bus.Publish(sim.Event{Lab: id, Kind: sim.EventGone})
	// The rows go even if the caller hangs up: a half-removed lab is
	// finished at the next start otherwise.
	return r.purge(context.WithoutCancel(ctx), id)
}

// Drop lets a removed lab go from this process: from memory, and from
// every room's keeping.
func (r *Registry) Drop(ctx context.Context, id string) {
	r.mu.Lock()
	delete(r.m, id)
	r.mu.Unlock()
	r.closeRooms(ctx, id, Removed)
}

// purge deletes a lab that is out of use (building or doomed): each room's
// rows a chunk at a time, then the lab.
func (r *Registry) purge(ctx context.Context, id string) error {
	for _, room := range r.rooms {
		if err := room.Purge(ctx, id); err != nil {
			return err
		}
	}
	// Whatever a request still running wrote meanwhile goes with the lab.
	res, err := r.store.Exec(ctx, `DELETE FROM labs WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		r.count.Add(-1)
	}
	return nil
}

// Finish makes a lab that was building (a scenario link's) a private lab
// like any other: whole, and seen by the housekeeping.
func (r *Registry) Finish(ctx context.Context, l *Lab) error {
	_, err := r.store.Exec(ctx, `UPDATE labs SET kind = ? WHERE id = ? AND kind = ?`, KindPrivate, l.ID, KindBuilding)
	return err
}
