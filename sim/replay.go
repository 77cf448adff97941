package sim

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// ScopeCharges is the idempotency scope of the protected charge endpoint.
// The lab's own API endpoints use scopes of their own, so a key used for a
// charge never collides with a key used to create an operation.
const ScopeCharges = "charges"

// Stored is an answer kept in an idempotency record, replayed byte for byte.
type Stored struct {
	Status      int
	Body        []byte
	Location    string
	ContentType string
}

// Claim is the right to process a request under an idempotency key, or,
// when Replay is set, the answer the key already has.
type Claim struct {
	e                      *Engine
	lab, scope, key, token string
	ttl                    time.Duration
	Replay                 *Stored
}

// Claim atomically takes the idempotency record (lab, scope, key) for a
// request with the given fingerprint: a single INSERT … ON CONFLICT DO UPDATE
// that succeeds only when the key is new, expired, or left in flight past
// its lock (a crashed request). Otherwise it reports why not: EKeyReused when
// the key came with another request, EInFlight (with RetryAfter) while the
// first request runs, or the stored answer to replay.
func (e *Engine) Claim(ctx context.Context, lab, scope, key, fingerprint string, ttl, lock time.Duration) (*Claim, error) {
	c := &Claim{e: e, lab: lab, scope: scope, key: key, token: newToken(), ttl: ttl}
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		now := e.now()
		var token string
		err := tx.QueryRowContext(ctx, `
INSERT INTO idempotency_records (lab_id, scope, key, fingerprint, state, token, locked_until, expires_at, created_at)
VALUES (?1, ?2, ?3, ?4, 'in-flight', ?5, ?6, ?7, ?8)
ON CONFLICT (lab_id, scope, key) DO UPDATE SET
    fingerprint = excluded.fingerprint, state = 'in-flight', token = excluded.token,
    status = NULL, location = NULL, content_type = NULL, body = NULL,
    locked_until = excluded.locked_until, expires_at = excluded.expires_at, created_at = excluded.created_at
WHERE idempotency_records.expires_at <= ?9
   OR (idempotency_records.state = 'in-flight' AND idempotency_records.locked_until <= ?9)
RETURNING token`,
			lab, scope, key, fingerprint, c.token, now.Add(lock).UnixMilli(), now.Add(ttl).UnixMilli(),
			now.UTC().Format(time.RFC3339Nano), now.UnixMilli()).Scan(&token)
		if err == nil {
			return nil // ours: go and do the work
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var (
			fp, state   string
			lockedUntil int64
			st          Stored
			status      sql.NullInt64
			loc, ct     sql.NullString
		)
		err = tx.QueryRowContext(ctx, `
SELECT fingerprint, state, locked_until, status, location, content_type, body
FROM idempotency_records WHERE lab_id = ? AND scope = ? AND key = ?`, lab, scope, key).
			Scan(&fp, &state, &lockedUntil, &status, &loc, &ct, &st.Body)
		if err != nil {
			return err
		}
		switch {
		case fp != fingerprint:
			return Errorf(EKeyReused, "The key %q was first used with a different request; a key belongs to one request.", key)
		case state == "in-flight":
			wait := time.UnixMilli(lockedUntil).Sub(now)
			return &Error{Code: EInFlight, Message: fmt.Sprintf("The first request with key %q is still being processed.", key), RetryAfter: wait}
		}
		st.Status, st.Location, st.ContentType = int(status.Int64), loc.String, ct.String
		c.Replay = &st
		return nil
	})
	if err != nil {
		if ErrorCode(err) != EInternal {
			return nil, err
		}
		return nil, fmt.Errorf("idempotency: claim %s: %w", key, err)
	}
	return c, nil
}

// complete stores the answer in the claimed record, inside the transaction
// that did the work, so the work and its record commit together. If the claim
// went stale and another request took the key over, it fails with EInFlight
// and the transaction must roll back.
func (c *Claim) complete(ctx context.Context, tx *sql.Tx, st Stored) error {
	now := c.e.now()
	res, err := tx.ExecContext(ctx, `
UPDATE idempotency_records
SET state = 'done', status = ?, location = ?, content_type = ?, body = ?, expires_at = ?
WHERE lab_id = ? AND scope = ? AND key = ? AND token = ? AND state = 'in-flight'`,
		st.Status, st.Location, st.ContentType, st.Body, now.Add(c.ttl).UnixMilli(), c.lab, c.scope, c.key, c.token)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.Join(err, &Error{Code: EInFlight, Message: fmt.Sprintf("The claim on key %q expired and another request took it over.", c.key), RetryAfter: time.Second})
	}
	return nil
}

// Complete stores the answer to a claimed request in its own transaction.
func (c *Claim) Complete(ctx context.Context, st Stored) error {
	return c.e.store.tx(ctx, func(tx *sql.Tx) error { return c.complete(ctx, tx, st) })
}

// Release gives the key back after a failure, so the next retry may claim it
// at once instead of waiting for the lock to time out.
func (c *Claim) Release(ctx context.Context) error {
	_, err := c.e.store.w.ExecContext(ctx,
		`DELETE FROM idempotency_records WHERE lab_id = ? AND scope = ? AND key = ? AND token = ? AND state = 'in-flight'`,
		c.lab, c.scope, c.key, c.token)
	return err
}

func (e *Engine) releaseLog(c *Claim) {
	if err := c.Release(context.Background()); err != nil {
		e.log.Warn("release idempotency claim", "lab", c.lab, "key", c.key, "err", err)
	}
}

func newToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
