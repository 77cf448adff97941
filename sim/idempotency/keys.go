package idempotency

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/keys"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// Keys is where each lab's idempotency keys live (the replay records and
// the UNIQUE column in the database, the SET NX keys in the key-value
// store), and the lab's clock, by which they expire.
type Keys struct {
	store *store.Store
	labs  *labs.Registry
	kv    *keys.Store // nil without a key-value store
	bus   *events.Bus
	clock clock.Clock
	log   *slog.Logger
	cache *cache
}

// NewKeys returns the keys of the records and of kv (nil: none).
func NewKeys(r *Records, reg *labs.Registry, kv *keys.Store, bus *events.Bus, log *slog.Logger) *Keys {
	return &Keys{store: r.store, labs: reg, kv: kv, bus: bus, clock: r.clock, log: log, cache: &r.cache}
}

// ErrKVDown is what List returns, with the keys of the lab's database, when
// the key-value store does not answer.
var ErrKVDown = errors.New("the key-value store does not answer")

// Room is the key-value store's part in a lab's life: a reset or a removal
// forgets the lab's keys there (memory let go of, when the lab idles or may
// be stale, keeps them). A store that does not answer keeps them until they
// expire.
func (k *Keys) Room() labs.Room { return kvRoom{k} }

type kvRoom struct{ k *Keys }

func (kvRoom) Init(context.Context, *store.Tx, string) error  { return nil }
func (kvRoom) Reset(context.Context, *store.Tx, string) error { return nil }
func (kvRoom) PurgeStatements() []string                      { return nil }

func (r kvRoom) Close(ctx context.Context, lab string, why labs.Closing) {
	if r.k.kv == nil || why == labs.Evicted || why == labs.Stale {
		return
	}
	if err := r.k.kv.Forget(ctx, lab); err != nil {
		r.k.log.Warn("set-nx: forget the keys", "lab", lab, "err", err)
	}
}

// Now is the time on the lab's clock.
func (k *Keys) Now(l *labs.Lab) time.Time { return k.clock.Now().Add(l.Clock()) }

// List lists the lab's newest idempotency keys in each store, `most` of
// each kind: the records the longest to live first (the newest, while the
// lab's key TTL does not change), the UNIQUE keys newest first. A
// key-value store that does not answer within kvWait (0: the caller's
// context decides) is ErrKVDown, with the rest listed.
func (k *Keys) List(ctx context.Context, l *labs.Lab, most int, kvWait time.Duration) ([]sim.KeyInfo, error) {
	out, err := k.records(ctx, l, most)
	if err != nil {
		return nil, err
	}
	if out, err = k.unique(ctx, l, most, out); err != nil {
		return nil, err
	}
	if k.kv == nil {
		return out, nil
	}
	kctx := ctx
	if kvWait > 0 {
		var cancel context.CancelFunc
		kctx, cancel = context.WithTimeout(ctx, kvWait)
		defer cancel()
	}
	ks, err := k.kv.Keys(kctx, l.ID, most)
	if err != nil {
		return out, ErrKVDown
	}
	for _, x := range ks {
		ki := sim.KeyInfo{Key: x.Key, Store: sim.StoreRedis, State: sim.KeySet}
		switch {
		case x.TTL > 0:
			ttl := x.TTL
			ki.TTL = &ttl
		case x.TTL == 0:
			var zero time.Duration
			ki.State, ki.TTL = sim.KeyExpired, &zero
		}
		out = append(out, ki)
	}
	return out, nil
}

// database is the store the lab's database keys live in.
func (k *Keys) database() string {
	if k.store.Postgres() {
		return sim.StorePostgres
	}
	return sim.StoreSQLite
}

// records lists the replay protection's records of the lab, from the end
// of their index by expiry.
func (k *Keys) records(ctx context.Context, l *labs.Lab, most int) ([]sim.KeyInfo, error) {
	now := k.Now(l)
	rows, err := k.store.Query(ctx, sqlKeys, l.ID, ScopeCharges, most)
	if err != nil {
		return nil, fmt.Errorf("keys of %s: %w", l.ID, err)
	}
	defer rows.Close()
	var out []sim.KeyInfo
	for rows.Next() {
		var (
			ki              = sim.KeyInfo{Store: k.database()}
			locked, expires int64
		)
		if err := rows.Scan(&ki.Key, &ki.State, &locked, &expires); err != nil {
			return nil, err
		}
		ttl := time.UnixMilli(expires).Sub(now)
		if ttl <= 0 {
			ki.State, ttl = sim.KeyExpired, 0
		}
		ki.TTL = &ttl
		if ki.State == sim.KeyInFlight {
			lock := max(time.UnixMilli(locked).Sub(now), 0)
			ki.Lock = &lock
		}
		out = append(out, ki)
	}
	return out, rows.Err()
}

// sqlKeys is a lab's records of a scope, the longest to live first: read
// from the end of their index by expiry (migration 14).
const sqlKeys = `
SELECT key, state, locked_until, expires_at FROM idempotency_records
WHERE lab_id = ? AND scope = ? AND expires_at >= 0 ORDER BY expires_at DESC LIMIT ?`

// SQLUniqueKeys is the newest keys the UNIQUE column of a lab's payments
// holds: read through the index of the payments that have one (migration
// 9), whatever the lab's history.
const SQLUniqueKeys = `SELECT dedup_key FROM payments WHERE lab_id = ? AND dedup_key IS NOT NULL ORDER BY n DESC LIMIT ?`

// unique lists the keys the UNIQUE column of the lab's payments holds.
func (k *Keys) unique(ctx context.Context, l *labs.Lab, most int, out []sim.KeyInfo) ([]sim.KeyInfo, error) {
	rows, err := k.store.Query(ctx, SQLUniqueKeys, l.ID, most)
	if err != nil {
		return nil, fmt.Errorf("keys of %s: %w", l.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		ki := sim.KeyInfo{Store: k.database(), State: sim.KeyUnique}
		if err := rows.Scan(&ki.Key); err != nil {
			return nil, err
		}
		out = append(out, ki)
	}
	return out, rows.Err()
}
