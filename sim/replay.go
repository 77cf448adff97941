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
	skew                   time.Duration // the lab's clock ahead of the engine's (Lab.Clock)
	fingerprint            string
	Replay                 *Stored

	done *answer // the record completed, to be remembered once committed
}

// Claim takes the idempotency record (lab, scope, key) for a request with
// the given fingerprint, or reports why not: EKeyReused when the key came
// with another request, EInFlight (with RetryAfter) while the first request
// runs, or the stored answer to replay (Claim.Replay).
func (e *Engine) Claim(ctx context.Context, lab, scope, key, fingerprint string, ttl, lock time.Duration) (*Claim, error) {
	c := e.newClaim(lab, scope, key, ttl, 0)
	if done, err := c.lookup(fingerprint); done || err != nil {
		return c, err
	}
	err := e.store.tx(ctx, func(tx *sql.Tx) error { return c.take(ctx, tx, fingerprint, lock) })
	if err != nil {
		return nil, c.wrap(err)
	}
	c.remember()
	return c, nil
}

func (e *Engine) newClaim(lab, scope, key string, ttl, skew time.Duration) *Claim {
	return &Claim{e: e, lab: lab, scope: scope, key: key, token: newToken(), ttl: ttl, skew: skew}
}

// now is the time on the lab's clock, by which the record expires.
func (c *Claim) now() time.Time { return c.e.now().Add(c.skew) }

func (c *Claim) wrap(err error) error {
	if ErrorCode(err) != EInternal {
		return err
	}
	return fmt.Errorf("idempotency: claim %s: %w", c.key, err)
}

// lookup answers from a finished, unexpired record in the engine's memory
// of answers: such a record never changes until it expires, so a replay (or
// a mismatch) needs neither the writer nor the database. A record not
// remembered is found by take, in the writer's transaction.
func (c *Claim) lookup(fingerprint string) (done bool, err error) {
	ans, ok := c.e.answers.get(c.recordKey(), c.now().UnixMilli())
	if !ok {
		return false, nil
	}
	return true, c.settle(record{fingerprint: ans.fingerprint, state: "done", expiresAt: ans.expiresAt, stored: ans.stored}, fingerprint)
}

func (c *Claim) recordKey() recordKey { return recordKey{c.lab, c.scope, c.key} }

// remember keeps the finished record this claim found or completed, once
// its transaction has committed.
func (c *Claim) remember() {
	if c.done != nil {
		c.e.answers.put(*c.done)
		c.done = nil
	}
}

// take atomically claims the record in tx: a single INSERT … ON CONFLICT DO
// UPDATE that succeeds only when the key is new, expired, or left in flight
// past its lock (a crashed request). When it does not, the record says why.
func (c *Claim) take(ctx context.Context, tx *sql.Tx, fingerprint string, lock time.Duration) error {
	now := c.now()
	c.fingerprint, c.done = fingerprint, nil
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
	if r.state == "done" {
		c.done = &answer{k: c.recordKey(), fingerprint: r.fingerprint, expiresAt: r.expiresAt, stored: r.stored}
	}
	return c.settle(r, fingerprint)
}

// errTaken is what takeDone's transaction fails with when the key was
// claimed already: the work it did rolls back.
var errTaken = errors.New("idempotency: the key is taken")

// takeDone claims the record and stores its answer in one statement, in
// the transaction that did the work: when no other request holds the key,
// there is no moment in which anyone could see the claim in flight. When
// another does, it fails with errTaken, and the transaction must roll back.
func (c *Claim) takeDone(ctx context.Context, tx *sql.Tx, fingerprint string, lock time.Duration, st Stored) error {
	now := c.now()
	c.fingerprint, c.done = fingerprint, nil
	var token string
	err := in(ctx, tx, c.e.store.q.claimDone).QueryRowContext(ctx,
		c.lab, c.scope, c.key, fingerprint, c.token, st.Status, st.Location, st.ContentType, st.Body,
		now.Add(lock).UnixMilli(), now.Add(c.ttl).UnixMilli(), now.UTC().Format(time.RFC3339Nano), now.UnixMilli()).Scan(&token)
	if errors.Is(err, sql.ErrNoRows) {
		return errTaken
	}
	if err != nil {
		return err
	}
	c.done = &answer{k: c.recordKey(), fingerprint: fingerprint, expiresAt: now.Add(c.ttl).UnixMilli(), stored: st}
	return nil
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
		wait := time.UnixMilli(r.lockedUntil).Sub(c.now())
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
	now := c.now()
	res, err := in(ctx, tx, c.e.store.q.complete).ExecContext(ctx,
		st.Status, st.Location, st.ContentType, st.Body, now.Add(c.ttl).UnixMilli(), c.lab, c.scope, c.key, c.token)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.Join(err, &Error{Code: EInFlight, Key: "claim-lost", Args: []any{clip(c.key)}, RetryAfter: time.Second})
	}
	c.done = &answer{k: c.recordKey(), fingerprint: c.fingerprint, expiresAt: now.Add(c.ttl).UnixMilli(), stored: st}
	return nil
}

// Complete stores the answer to a claimed request in its own transaction.
func (c *Claim) Complete(ctx context.Context, st Stored) error {
	err := c.e.store.tx(ctx, func(tx *sql.Tx) error { return c.complete(ctx, tx, st) })
	if err == nil {
		c.remember()
	}
	return err
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
