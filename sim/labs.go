package sim

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// A lab's life, in one place: made (CreateLab, a scenario link, compare),
// loaded into memory when used (Lab), let go from memory when idle (evict),
// removed with everything in it when deleted or idle past Config.LabIdle
// (remove), and mended after a crash (start).

// The kinds of labs.
const (
	kindDemo     = "demo"
	kindPrivate  = "private"
	kindCompare  = "compare"  // made by a comparison run; idles out like any other
	kindBuilding = "building" // a scenario link's lab, until it is whole
	kindDoomed   = "doomed"   // being removed
)

// labCache holds the labs in use. count is how many labs the database holds
// (all kinds), for the -max-labs limit.
type labCache struct {
	mu    sync.Mutex
	m     map[string]*Lab
	count atomic.Int64
}

// memIdle is how long an unused lab stays in memory.
const memIdle = 10 * time.Minute

// purgeChunk is how many rows one transaction of a removal deletes, so that
// removing a big lab never holds the writer long from the others.
const purgeChunk = 500

// start creates the demo lab if missing, mends what a crash left behind
// (attempts that never ended, claims of the lab's own API held by the dead
// process, scenario labs half built, labs half removed) and counts the labs.
// Of several processes on one database, only one that starts alone mends:
// what looks unfinished to a process that joins others is theirs, running.
func (e *Engine) start(ctx context.Context) error {
	if err := e.mend(ctx); err != nil {
		return err
	}
	if err := e.store.join(ctx); err != nil {
		return err
	}
	return e.recount(ctx)
}

// recount reads how many labs the database holds.
func (e *Engine) recount(ctx context.Context) error {
	var n int64
	if err := e.store.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM labs`).Scan(&n); err != nil {
		return fmt.Errorf("engine: count the labs: %w", err)
	}
	e.labs.count.Store(n)
	return nil
}

// mend is start's first part: the demo lab, and what a crash left.
func (e *Engine) mend(ctx context.Context) error {
	now := e.now()
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO labs (id, settings, created_at, kind, touched_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			DemoLab, mustJSON(DefaultSettings()), e.stamp(), kindDemo, now.UnixMilli())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO lab_counts (lab_id) VALUES (?)`, DemoLab); err != nil {
				return err
			}
			base := DefaultSettings()
			if err := e.record(ctx, tx, DemoLab, Action{Kind: "base", Base: &base}); err != nil {
				return err
			}
		}
		if !e.store.alone {
			return nil
		}
		// Nothing is in flight in a process that has just started.
		if _, err := tx.ExecContext(ctx, `
UPDATE attempts SET finished_at = ?, outcome = CASE outcome WHEN 'pending' THEN 'unknown' ELSE outcome END,
    error = COALESCE(error, 'client: the lab restarted before the answer came')
WHERE finished_at IS NULL`, now.UTC().Format(time.RFC3339Nano)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency_records WHERE state = 'in-flight' AND scope <> ?`, ScopeCharges); err != nil {
			return err
		}
		// Whoever held an unsent email is gone with the last run: the mailer
		// may send it at once.
		_, err = tx.ExecContext(ctx, `UPDATE email_outbox SET claimed_at = 0 WHERE sent = 0 AND claimed_at > 0`)
		return err
	})
	if err != nil {
		return fmt.Errorf("engine: start: %w", err)
	}
	if !e.store.alone {
		return nil
	}
	leftovers, err := e.labIDs(ctx, `SELECT id FROM labs WHERE kind IN (?, ?)`, kindBuilding, kindDoomed)
	if err != nil {
		return fmt.Errorf("engine: start: %w", err)
	}
	for _, id := range leftovers {
		if err := e.purge(ctx, id); err != nil {
			return fmt.Errorf("engine: start: remove %s: %w", id, err)
		}
	}
	return nil
}

// labIDs runs a query for lab ids.
func (e *Engine) labIDs(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := e.store.r.QueryContext(ctx, query, args...)
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

// NewLabID returns an unguessable lab id: 128 random bits, URL-safe.
func NewLabID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// ValidLabID reports whether id has the shape of a lab id, so that
// malformed ids are refused without touching the database.
func ValidLabID(id string) bool {
	if id == DemoLab {
		return true
	}
	if len(id) != 22 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}

// CreateLab makes a private lab with default settings and a random seed.
func (e *Engine) CreateLab(ctx context.Context) (*Lab, error) {
	s := DefaultSettings()
	s.Seed = mrand.Int64N(MaxSeed)
	return e.createLab(ctx, kindPrivate, s)
}

// createLab makes a lab of the kind with the settings, within -max-labs.
func (e *Engine) createLab(ctx context.Context, kind string, s Settings) (*Lab, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := e.checkStore(s); err != nil {
		return nil, err
	}
	if e.labs.count.Add(1) > int64(e.cfg.MaxLabs) {
		e.labs.count.Add(-1)
		return nil, Busy("max-labs", e.cfg.SweepEvery, "max-labs", e.cfg.MaxLabs, int(e.cfg.LabIdle.Hours())) // idle labs go at the next sweep
	}
	id := NewLabID()
	now := e.now()
	var st labState
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO labs (id, settings, created_at, kind, touched_at) VALUES (?, ?, ?, ?, ?)`,
			id, mustJSON(s), e.stamp(), kind, now.UnixMilli()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO lab_counts (lab_id) VALUES (?)`, id); err != nil {
			return err
		}
		if err := e.record(ctx, tx, id, Action{Kind: "base", Base: &s}); err != nil {
			return err
		}
		var err error
		st, err = loadState(ctx, tx, id)
		return err
	})
	if err != nil {
		e.labs.count.Add(-1)
		return nil, fmt.Errorf("engine: create lab: %w", err)
	}
	l := newLab(id, st, e.perLab())
	l.used.Store(now.UnixNano())
	l.touched.Store(now.UnixMilli())
	e.labs.mu.Lock()
	e.labs.m[id] = l
	e.labs.mu.Unlock()
	return l, nil
}

// Lab returns the lab with the given id, or ENotFound, and marks it used.
func (e *Engine) Lab(ctx context.Context, id string) (*Lab, error) {
	if !ValidLabID(id) {
		return nil, noLab(id)
	}
	now := e.now().UnixNano()
	e.labs.mu.Lock()
	l, ok := e.labs.m[id]
	if ok {
		l.used.Store(now)
	}
	e.labs.mu.Unlock()
	if ok {
		return l, nil
	}
	st, err := loadState(ctx, e.store.r, id)
	if err != nil {
		return nil, err
	}
	if st.kind == kindDoomed {
		return nil, noLab(id)
	}
	e.labs.mu.Lock()
	defer e.labs.mu.Unlock()
	if l, ok := e.labs.m[id]; ok { // another request loaded it meanwhile
		l.used.Store(now)
		return l, nil
	}
	l = newLab(id, st, e.perLab())
	l.used.Store(now)
	l.touched.Store(-1) // unknown: the next flush writes it
	e.labs.m[id] = l
	return l, nil
}

// LabCount is how many labs the server holds, of every kind.
func (e *Engine) LabCount() int64 { return e.labs.count.Load() }

// InMemory is how many labs are held in memory now.
func (e *Engine) InMemory() int {
	e.labs.mu.Lock()
	defer e.labs.mu.Unlock()
	return len(e.labs.m)
}

// DeleteLab removes a private lab and everything in it. The shared lab
// cannot be removed.
func (e *Engine) DeleteLab(ctx context.Context, id string) error {
	if id == DemoLab {
		return Errorf(EForbidden, "demo-delete", DemoLab)
	}
	if _, err := e.Lab(ctx, id); err != nil {
		return err
	}
	return e.remove(ctx, id)
}

// remove takes the lab out of use at once (it answers 404 from then on),
// then deletes its rows a chunk at a time, then the lab.
func (e *Engine) remove(ctx context.Context, id string) error {
	res, err := e.store.exec(ctx, `UPDATE labs SET kind = ? WHERE id = ? AND kind <> ?`, kindDoomed, id, kindDemo)
	if err != nil {
		return fmt.Errorf("engine: remove %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return noLab(id) // removed meanwhile by another request
	}
	e.drop(id)
	e.forgetConsumer(ctx, id)
	e.forgetKeys(ctx, id)
	e.emit(Event{Lab: id, Kind: EventGone})
	// The rows go even if the caller hangs up: a half-removed lab is
	// finished at the next start otherwise.
	return e.purge(context.WithoutCancel(ctx), id)
}

// purge deletes a lab that is out of use (building or doomed): each room's
// rows a chunk at a time, then the lab.
func (e *Engine) purge(ctx context.Context, id string) error {
	var steps []string
	for _, r := range e.rooms {
		steps = append(steps, r.Purge()...)
	}
	for _, q := range steps {
		for {
			res, err := e.store.exec(ctx, q, id, purgeChunk)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n < purgeChunk {
				break
			}
		}
	}
	// Whatever a request still running wrote meanwhile goes with the lab.
	res, err := e.store.exec(ctx, `DELETE FROM labs WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		e.labs.count.Add(-1)
	}
	return nil
}

// janitor runs the lab's housekeeping every Config.SweepEvery until the
// engine closes.
func (e *Engine) janitor() {
	t := time.NewTicker(e.cfg.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
			if err := e.Sweep(e.ctx); err != nil && e.ctx.Err() == nil {
				e.log.Warn("housekeeping", "err", err)
			}
		}
	}
}

// Sweep does the housekeeping once: writes when labs were last used,
// deletes expired idempotency records, removes labs idle past
// Config.LabIdle and lets idle labs go from memory. Of several processes on
// one database, the leader alone expires; each reads the database's clock
// and its count of labs afresh.
func (e *Engine) Sweep(ctx context.Context) error {
	now := e.now()
	errs := []error{e.flushTouches(ctx, now)}
	if e.store.lead(ctx) {
		errs = append(errs, e.expireRecords(ctx, now), e.expireLabs(ctx, now), e.expireComparisons(ctx, now))
	}
	errs = append(errs, e.evict(now))
	if e.store.postgres() {
		errs = append(errs, e.store.measureSkew(ctx), e.recount(ctx))
	}
	return errors.Join(errs...)
}

// flushTouches writes touched_at of the labs used since it was last written.
func (e *Engine) flushTouches(ctx context.Context, now time.Time) error {
	type touch struct {
		l  *Lab
		at int64
	}
	var ts []touch
	e.labs.mu.Lock()
	for _, l := range e.labs.m {
		if at := time.Unix(0, l.used.Load()).UnixMilli(); at > l.touched.Load() {
			ts = append(ts, touch{l, at})
		}
	}
	e.labs.mu.Unlock()
	if len(ts) == 0 {
		return nil
	}
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		for _, t := range ts {
			if _, err := tx.ExecContext(ctx, `UPDATE labs SET touched_at = ?1 WHERE id = ?2 AND touched_at < ?1`, t.at, t.l.ID); err != nil {
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

// expireRecords deletes finished idempotency records past their expiry, a
// chunk at a time.
func (e *Engine) expireRecords(ctx context.Context, now time.Time) error {
	for {
		res, err := e.store.exec(ctx, `
DELETE FROM idempotency_records WHERE (lab_id, scope, key) IN (
    SELECT lab_id, scope, key FROM idempotency_records WHERE expires_at <= ? AND state = 'done' LIMIT ?)`,
			now.UnixMilli(), purgeChunk)
		if err != nil {
			return fmt.Errorf("delete expired idempotency records: %w", err)
		}
		if n, _ := res.RowsAffected(); n < purgeChunk {
			return nil
		}
	}
}

// expireLabs removes the labs untouched for Config.LabIdle.
func (e *Engine) expireLabs(ctx context.Context, now time.Time) error {
	cutoff := now.Add(-e.cfg.LabIdle)
	idle, err := e.labIDs(ctx, `SELECT id FROM labs WHERE touched_at < ? AND kind IN (?, ?) LIMIT 100`,
		cutoff.UnixMilli(), kindPrivate, kindCompare)
	if err != nil {
		return fmt.Errorf("find idle labs: %w", err)
	}
	var errs []error
	for _, id := range idle {
		e.labs.mu.Lock()
		l, ok := e.labs.m[id]
		inUse := ok && (l.active.Load() > 0 || l.used.Load() > cutoff.UnixNano())
		e.labs.mu.Unlock()
		if inUse {
			continue // used since its last flush: the next flush says so
		}
		if err := e.remove(ctx, id); err != nil && ErrorCode(err) != ENotFound {
			errs = append(errs, fmt.Errorf("remove idle lab %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// expireComparisons deletes the comparisons as old as Config.LabIdle: their
// labs idle out about then.
func (e *Engine) expireComparisons(ctx context.Context, now time.Time) error {
	if _, err := e.store.exec(ctx, `DELETE FROM comparisons WHERE created_at < ?`, now.Add(-e.cfg.LabIdle).UnixMilli()); err != nil {
		return fmt.Errorf("delete old comparisons: %w", err)
	}
	return nil
}

// evict lets go from memory the labs unused for memIdle (or LabIdle, when
// shorter), with nothing running in them.
func (e *Engine) evict(now time.Time) error {
	cutoff := now.Add(-min(memIdle, e.cfg.LabIdle)).UnixNano()
	var gone []string
	e.labs.mu.Lock()
	for id, l := range e.labs.m {
		if l.active.Load() == 0 && l.used.Load() < cutoff && l.touched.Load() >= time.Unix(0, l.used.Load()).UnixMilli() {
			delete(e.labs.m, id)
			gone = append(gone, id)
		}
	}
	e.labs.mu.Unlock()
	e.stopConsumers(gone) // the next message of the lab starts its consumer again
	return nil
}

// perLab is how many simulated requests one lab may have in flight: a
// quarter of the server's, and never less than one race of 64 needs.
func (e *Engine) perLab() int64 { return max(int64(e.cfg.MaxInFlight)/4, 2*maxRace) }
