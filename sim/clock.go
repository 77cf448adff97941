package sim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// MaxClockAdvance is the most one move of a lab's clock may take, in
// seconds: longer than any key's TTL (30 days).
const MaxClockAdvance = 365 * 24 * 60 * 60

// AdvanceClock moves the lab's clock forward by seconds, for expiry: the replay
// protection's records (their TTL and their lock) and the key-value store's
// keys alike. The store's keys move first, in one atomic script; a store that
// does not answer leaves everything as it was (503) when the lab guards
// with it, and is passed by otherwise. It returns the lab's time now.
func (e *Engine) AdvanceClock(ctx context.Context, l *Lab, seconds int64) (time.Time, error) {
	if seconds < 1 || seconds > MaxClockAdvance {
		return time.Time{}, Invalid(Broke("advance_s", "range", 1, MaxClockAdvance))
	}
	d := time.Duration(seconds) * time.Second
	if e.kv != nil {
		if _, err := e.kv.Advance(ctx, l.ID, d); err != nil {
			if l.Settings().Protection == ProtectSetNX {
				return time.Time{}, Busy("kv", 5*time.Second, "kv-down")
			}
			e.log.Warn("clock: the key-value store's keys stay as they are", "lab", l.ID, "err", err)
		}
	}
	_, next, err := e.change(ctx, l, func(tx *sql.Tx, _ labState) error {
		if _, err := tx.ExecContext(ctx, `UPDATE labs SET clock_ms = clock_ms + ? WHERE id = ?`, d.Milliseconds(), l.ID); err != nil {
			return err
		}
		return e.record(ctx, tx, l.ID, Action{Kind: "clock", N: int(seconds)})
	})
	if err != nil {
		if ErrorCode(err) != EInternal {
			return time.Time{}, err
		}
		return time.Time{}, fmt.Errorf("clock: advance %s: %w", l.ID, err)
	}
	e.answers.forget(l.ID) // remembered answers expire by the lab's clock: read them afresh
	e.emit(Event{Lab: l.ID, Kind: EventClock})
	return e.now().Add(next.clock), nil
}

// LabNow is the time on the lab's clock.
func (e *Engine) LabNow(l *Lab) time.Time { return e.now().Add(l.Clock()) }

// Where an idempotency key lives.
const (
	StoreSQLite = "sqlite"
	StoreRedis  = "redis"
)

// The states of a key, as the keys panel and the API name them.
const (
	KeyInFlight = "in-flight" // replay: claimed, the first request still running (or dead)
	KeyDone     = "done"      // replay: the answer is stored
	KeyExpired  = "expired"   // past its TTL: the next request with it is new
	KeyUnique   = "unique"    // unique, on-conflict: the payment's own column, for ever
	KeySet      = "set"       // set-nx: SET in the key-value store
)

// KeyInfo is one idempotency key of a lab: where it lives, in what state,
// and how long it has left (TTL nil: for ever).
type KeyInfo struct {
	Key, Store, State string
	TTL               *time.Duration
	Lock              *time.Duration // in flight: how long until another request may take it over
}

// Keys lists the lab's newest idempotency keys in each store, `most` of
// each kind, newest first: the replay records and the UNIQUE column in the
// lab's database, the SET NX keys in the key-value store. A key-value store
// that does not answer within kvWait (0: the caller's context decides) is
// ErrKVDown, with the rest listed.
func (e *Engine) Keys(ctx context.Context, l *Lab, most int, kvWait time.Duration) ([]KeyInfo, error) {
	now := e.LabNow(l)
	var out []KeyInfo
	rows, err := e.store.r.QueryContext(ctx, `
SELECT key, state, locked_until, expires_at FROM idempotency_records
WHERE lab_id = ? AND scope = ? ORDER BY created_at DESC LIMIT ?`, l.ID, ScopeCharges, most)
	if err != nil {
		return nil, fmt.Errorf("keys of %s: %w", l.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k               = KeyInfo{Store: StoreSQLite}
			locked, expires int64
		)
		if err := rows.Scan(&k.Key, &k.State, &locked, &expires); err != nil {
			return nil, err
		}
		ttl := time.UnixMilli(expires).Sub(now)
		if ttl <= 0 {
			k.State, ttl = KeyExpired, 0
		}
		k.TTL = &ttl
		if k.State == KeyInFlight {
			lock := max(time.UnixMilli(locked).Sub(now), 0)
			k.Lock = &lock
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	urows, err := e.store.r.QueryContext(ctx, `
SELECT dedup_key FROM payments WHERE lab_id = ? AND dedup_key IS NOT NULL ORDER BY n DESC LIMIT ?`, l.ID, most)
	if err != nil {
		return nil, fmt.Errorf("keys of %s: %w", l.ID, err)
	}
	defer urows.Close()
	for urows.Next() {
		k := KeyInfo{Store: StoreSQLite, State: KeyUnique}
		if err := urows.Scan(&k.Key); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	if err := urows.Err(); err != nil {
		return nil, err
	}
	if e.kv == nil {
		return out, nil
	}
	kctx := ctx
	if kvWait > 0 {
		var cancel context.CancelFunc
		kctx, cancel = context.WithTimeout(ctx, kvWait)
		defer cancel()
	}
	ks, err := e.kv.Keys(kctx, l.ID, most)
	if err != nil {
		return out, ErrKVDown
	}
	for _, x := range ks {
		k := KeyInfo{Key: x.Key, Store: StoreRedis, State: KeySet}
		switch {
		case x.TTL > 0:
			ttl := x.TTL
			k.TTL = &ttl
		case x.TTL == 0:
			var zero time.Duration
			k.State, k.TTL = KeyExpired, &zero
		}
		out = append(out, k)
	}
	return out, nil
}

// ErrKVDown is what Keys returns, with the keys of the lab's database,
// when the key-value store does not answer.
var ErrKVDown = errors.New("the key-value store does not answer")

// LostCharges lists at most `most` orders of the lab that the server told
// "already done" (a duplicate, a replay) and that have no payment: the
// customer believes they paid, and nobody was charged. The count is of all.
func (e *Engine) LostCharges(ctx context.Context, l *Lab, most int) ([]string, int, error) {
	rows, err := e.store.r.QueryContext(ctx, `
SELECT order_id FROM order_stats WHERE lab_id = ? AND told_done > 0 AND charges = 0 ORDER BY order_id`, l.ID)
	if err != nil {
		return nil, 0, fmt.Errorf("lost charges of %s: %w", l.ID, err)
	}
	defer rows.Close()
	var (
		out []string
		n   int
	)
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			return nil, 0, err
		}
		if n++; len(out) < most {
			out = append(out, o)
		}
	}
	return out, n, rows.Err()
}
