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

// Claim takes the idempotency record (lab, scope, key) for a request with
// the given fingerprint, or reports why not: EKeyReused when the key came
// with another request, EInFlight (with RetryAfter) while the first request
// runs, or the stored answer to replay (Claim.Replay).
func (e *Engine) Claim(ctx context.Context, lab, scope, key, fingerprint string, ttl, lock time.Duration) (*Claim, error) {
	c := e.newClaim(lab, scope, key, ttl)
	if done, err := c.lookup(ctx, fingerprint); done || err != nil {
		return c, err
	}
	err := e.store.tx(ctx, func(tx *sql.Tx) error { return c.take(ctx, tx, fingerprint, lock) })
	if err != nil {
		return nil, c.wrap(err)
	}
	return c, nil
}

func (e *Engine) newClaim(lab, scope, key string, ttl time.Duration) *Claim {
	return &Claim{e: e, lab: lab, scope: scope, key: key, token: newToken(), ttl: ttl}
}

func (c *Claim) wrap(err error) error {
	if ErrorCode(err) != EInternal {
		return err
	}
	return fmt.Errorf("idempotency: claim %s: %w", c.key, err)
}

// lookup answers from a finished, unexpired record without a writing
// transaction: such a record never changes until it expires, so a replay (or
// a mismatch) needs only a read, on the reader pool, beside the writer.
func (c *Claim) lookup(ctx context.Context, fingerprint string) (done bool, err error) {
	r, err := c.read(ctx, c.e.store.q.recordR)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, c.wrap(err)
	}
	if r.state != "done" || r.expiresAt <= c.e.now().UnixMilli() {
		return false, nil
	}
	return true, c.settle(r, fingerprint)
}

// take atomically claims the record in tx: a single INSERT … ON CONFLICT DO
// UPDATE that succeeds only when the key is new, expired, or left in flight
// past its lock (a crashed request). When it does not, the record says why.
func (c *Claim) take(ctx context.Context, tx *sql.Tx, fingerprint string, lock time.Duration) error {
	now := c.e.now()
	var token string
	err := in(ctx, tx, c.e.store.q.claim).QueryRowContext(ctx,
		c.lab, c.scope, c.key, fingerprint, c.token, now.Add(lock).UnixMilli(), now.Add(c.ttl).UnixMilli(),
		now.UTC().Format(time.RFC3339Nano), now.UnixMilli()).Scan(&token)
	if err == nil {
		return nil // ours: go and do the work
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	r, err := c.read(ctx, in(ctx, tx, c.e.store.q.record))
	if err != nil {
		return err
	}
	return c.settle(r, fingerprint)
}

// record is an idempotency record as read.
type record struct {
	fingerprint, state     string
	lockedUntil, expiresAt int64
	stored                 Stored
}

func (c *Claim) read(ctx context.Context, st *sql.Stmt) (record, error) {
	var (
		r       record
		status  sql.NullInt64
		loc, ct sql.NullString
	)
	err := st.QueryRowContext(ctx, c.lab, c.scope, c.key).
		Scan(&r.fingerprint, &r.state, &r.lockedUntil, &r.expiresAt, &status, &loc, &ct, &r.stored.Body)
	r.stored.Status, r.stored.Location, r.stored.ContentType = int(status.Int64), loc.String, ct.String
	return r, err
}

// settle decides what a request gets from a record it could not claim.
func (c *Claim) settle(r record, fingerprint string) error {
	switch {
	case r.fingerprint != fingerprint:
		return Errorf(EKeyReused, "key-reused", clip(c.key))
	case r.state == "in-flight":
		wait := time.UnixMilli(r.lockedUntil).Sub(c.e.now())
		return &Error{Code: EInFlight, Key: "in-flight", Args: []any{clip(c.key)}, RetryAfter: wait}
	}
	st := r.stored
	c.Replay = &st
	return nil
}

// complete stores the answer in the claimed record, inside the transaction
// that did the work, so the work and its record commit together. If the claim
// went stale and another request took the key over, it fails with EInFlight
// and the transaction must roll back.
func (c *Claim) complete(ctx context.Context, tx *sql.Tx, st Stored) error {
	now := c.e.now()
	res, err := in(ctx, tx, c.e.store.q.complete).ExecContext(ctx,
		st.Status, st.Location, st.ContentType, st.Body, now.Add(c.ttl).UnixMilli(), c.lab, c.scope, c.key, c.token)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.Join(err, &Error{Code: EInFlight, Key: "claim-lost", Args: []any{clip(c.key)}, RetryAfter: time.Second})
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
	_, err := c.e.store.exec(ctx,
		`DELETE FROM idempotency_records WHERE lab_id = ? AND scope = ? AND key = ? AND token = ? AND state = 'in-flight'`,
		c.lab, c.scope, c.key, c.token)
	return err
}

// ReleaseLog releases the claim, logging a failure to: for a caller that
// is failing already.
func (e *Engine) ReleaseLog(c *Claim) {
	if err := c.Release(context.Background()); err != nil {
		e.log.Warn("release idempotency claim", "lab", c.lab, "key", c.key, "err", err)
	}
}

func newToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
