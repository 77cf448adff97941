// Package idempotency keeps the idempotency records of the replay
// protection (IETF Idempotency-Key draft, Stripe) and of the lab's own API:
// claims taken atomically, answers stored with the work, a cache of the
// finished ones under each lab's reset generation; and where each lab's
// keys live, with the lab's clock that moves their expiry.
package idempotency

import (
	"context"
	"sync/atomic"
	"time"

	"idemlab/sim/clock"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// ScopeCharges is the idempotency scope of the protected charge endpoint.
// The lab's own API endpoints use scopes of their own, so a key used for a
// charge never collides with a key used to create an operation.
const ScopeCharges = "charges"

// Records are the labs' idempotency records.
type Records struct {
	store *store.Store
	clock clock.Clock
	cache cache
	fresh *fresh // PostgreSQL: the labs' generations as stored, to trust the cache by
	// trusted reports whether this process may trust what it keeps of the
	// labs without reading the database (Trust); nil: never.
	trusted atomic.Pointer[func() bool]

	claim, record, complete *store.Stmt
}

// New returns the records of the store, by the clock (the database's).
func New(ctx context.Context, s *store.Store, c clock.Clock) (*Records, error) {
	r := &Records{store: s, clock: c}
	if s.Postgres() {
		r.fresh = &fresh{pool: s.Pool()}
	}
	for _, p := range []struct {
		dst **store.Stmt
		sql string
	}{{&r.claim, sqlClaim}, {&r.record, sqlRecord}, {&r.complete, sqlComplete}} {
		st, err := s.Prepare(ctx, p.sql)
		if err != nil {
			return nil, err
		}
		*p.dst = st
	}
	return r, nil
}

// Room is the records' part in a lab's life.
func (r *Records) Room() labs.Room { return room{r} }

type room struct{ r *Records }

func (room) Init(context.Context, *store.Tx, string) error { return nil }

func (room) Reset(_ context.Context, tx *store.Tx, lab string) error {
	_, err := tx.Exec(`DELETE FROM idempotency_records WHERE lab_id = ?1`, lab)
	return err
}

// PurgeStatements deletes the lab's records.
func (room) PurgeStatements() []string {
	return []string{`DELETE FROM idempotency_records WHERE (lab_id, scope, key) IN (SELECT lab_id, scope, key FROM idempotency_records WHERE lab_id = ?1 LIMIT ?2)`}
}

// Close forgets the lab's cached answers: after a reset they are of an old
// generation, and never found again anyway; this frees their memory.
func (rm room) Close(_ context.Context, lab string, _ labs.Closing) { rm.r.cache.forget(lab) }

// Sweep deletes finished records past their expiry (sweep.go).
func (rm room) Sweep(ctx context.Context, now time.Time) error { return sweep(ctx, rm.r.store, now) }

// The statements of the claim.
const (
	// The claim: one statement that takes the key when it is new, expired,
	// or left in flight past its lock, and otherwise changes nothing. It
	// records the process that holds it (?9): when that process dies, the
	// claim is its to mend (the lab's own API's), nobody else's.
	sqlClaim = `
INSERT INTO idempotency_records (lab_id, scope, key, fingerprint, state, token, locked_until, expires_at, created_at, process)
VALUES (?1, ?2, ?3, ?4, 'in-flight', ?5, ?6, ?7, ?8, ?9)
ON CONFLICT (lab_id, scope, key) DO UPDATE SET
    fingerprint = excluded.fingerprint, state = 'in-flight', token = excluded.token,
    status = NULL, location = NULL, content_type = NULL, body = NULL,
    locked_until = excluded.locked_until, expires_at = excluded.expires_at, created_at = excluded.created_at,
    process = excluded.process
WHERE idempotency_records.expires_at <= ?8
   OR (idempotency_records.state = 'in-flight' AND idempotency_records.locked_until <= ?8)
RETURNING token`

	// The claim and its answer at once, for a request whose work is already
	// in the transaction: taken on the same terms as sqlClaim. A write held
	// for its group commit (store.Tx.Later): every value in its row.
	sqlClaimDone = `
INSERT INTO idempotency_records (lab_id, scope, key, fingerprint, state, token, status, location, content_type, body, locked_until, expires_at, created_at, process)
VALUES (?1, ?2, ?3, ?4, 'done', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
ON CONFLICT (lab_id, scope, key) DO UPDATE SET
    fingerprint = excluded.fingerprint, state = 'done', token = excluded.token,
    status = excluded.status, location = excluded.location, content_type = excluded.content_type, body = excluded.body,
    locked_until = excluded.locked_until, expires_at = excluded.expires_at, created_at = excluded.created_at,
    process = excluded.process
WHERE idempotency_records.expires_at <= excluded.created_at
   OR (idempotency_records.state = 'in-flight' AND idempotency_records.locked_until <= excluded.created_at)`

	sqlRecord = `
SELECT fingerprint, state, locked_until, expires_at, status, location, content_type, body
FROM idempotency_records WHERE lab_id = ? AND scope = ? AND key = ?`

	sqlComplete = `
UPDATE idempotency_records
SET state = 'done', status = ?, location = ?, content_type = ?, body = ?, expires_at = ?
WHERE lab_id = ? AND scope = ? AND key = ? AND token = ? AND state = 'in-flight'`
)
