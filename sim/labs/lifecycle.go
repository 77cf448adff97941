package labs

import (
	"context"
	"fmt"
	"time"

	"idemlab/sim"
	"idemlab/sim/store"
)

// A lab's life: made (Create, a scenario link, compare), loaded into memory
// when used (Lab), let go from memory when idle (evict), removed with
// everything in it when deleted or idle past Config.LabIdle (Remove), and
// mended after its process died (start, and the store's MendDead).

// start makes the demo lab if missing, mends the work of the processes
// that died (attempts that never ended, claims of the lab's own API, emails
// being sent: mendDead, which the store runs again whenever it finds a
// process dead), finishes removing what the last run left half done when
// no other process runs, and counts the labs. What a live process owns is
// never mended: it is running.
func start(ctx context.Context, r *Registry) error {
	began := r.clock.Now()
	r.store.Mending(func(tx *store.Tx) error { return mendDead(tx, r.clock.Now().UnixMilli()) })
	err := r.store.Write(ctx, func(tx *store.Tx) error {
		_, err := r.insert(ctx, tx, sim.DemoLab, KindDemo, sim.DefaultSettings(), began, nil)
		return err
	})
	if err == nil {
		err = r.store.MendDead(ctx)
	}
	if err == nil && r.store.Alone() {
		err = purgeLeftovers(ctx, r, began)
	}
	if err != nil {
		return fmt.Errorf("labs: start: %w", err)
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

// purgeLeftovers removes the labs a dead process left half built (made
// before this one started) or half removed: they own no process, so only
// a process that started alone removes them.
func purgeLeftovers(ctx context.Context, r *Registry, began time.Time) error {
	leftovers, err := IDs(ctx, r.store, `SELECT id FROM labs WHERE kind = ? AND created_at < ? OR kind = ?`,
		KindBuilding, began.UnixMilli(), kindDoomed)
	if err != nil {
		return err
	}
	for _, id := range leftovers {
		if err := r.purge(ctx, id); err != nil {
			return fmt.Errorf("remove %s: %w", id, err)
		}
	}
	return nil
}

// noOwner is the condition of work (a row of table t) whose process has no
// row in processes: it died (its row taken away), left, or wrote the row
// before owners were kept.
func noOwner(t string) string {
	return `(` + t + `.process IS NULL OR NOT EXISTS (SELECT 1 FROM processes p WHERE p.id = ` + t + `.process))`
}

// mendDead ends, in tx, what processes that are gone left under way: their
// attempts never get an answer now; the lab's own API's claims they held
// are given back (the charges' stay in flight until their lock times out,
// as a crash leaves them); the emails they were sending may be sent at once.
func mendDead(tx *store.Tx, now int64) error {
	if _, err := tx.Exec(`
UPDATE attempts SET finished_at = ?, outcome = CASE outcome WHEN 'pending' THEN 'unknown' ELSE outcome END,
    error = COALESCE(error, 'client: the lab restarted before the answer came')
WHERE finished_at IS NULL AND `+noOwner("attempts"), now); err != nil {
		return err
	}
	if _, err := tx.Exec(`DELETE FROM idempotency_records WHERE state = 'in-flight' AND scope <> 'charges' AND ` + noOwner("idempotency_records")); err != nil {
		return err
	}
	_, err := tx.Exec(`UPDATE email_outbox SET claimed_at = 0, process = NULL WHERE sent = 0 AND claimed_at > 0 AND ` + noOwner("email_outbox"))
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
	err := r.store.Write(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(`UPDATE labs SET kind = ? WHERE id = ? AND kind <> ?`, kindDoomed, id, KindDemo)
		if err != nil {
			return fmt.Errorf("labs: remove %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return sim.NoLab(id) // removed meanwhile by another request
		}
		tx.Notify(sim.Event{Lab: id, Kind: sim.EventGone}) // heard by the others if, and only if, it is gone
		return nil
	})
	if err != nil {
		return err
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
	closeRooms(ctx, r.rooms, id, Removed)
}

// purge deletes a lab that is out of use (building or doomed): every
// room's rows, a chunk at a time, then the lab.
func (r *Registry) purge(ctx context.Context, id string) error {
	var statements []string
	for _, room := range r.rooms {
		statements = append(statements, room.PurgeStatements()...)
	}
	if err := r.store.DeleteChunks(ctx, id, statements...); err != nil {
		return err
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
