package idempotency

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// Claim is the right to process a request under an idempotency key, or,
// when Replay is set, the answer the key already has.
type Claim struct {
	r                      *Records
	l                      *labs.Lab
	lab, scope, key, token string
	gen                    int64 // the lab's reset generation when claimed
	ttl                    time.Duration
	skew                   time.Duration // the lab's clock ahead of the process's (labs.Lab.Clock)
	fingerprint            string
	Replay                 *sim.Stored

	done *answer // the record completed, to be remembered once committed
}

// Claim takes the record (lab, scope, key) for a request with the given
// fingerprint, in a transaction of its own, or reports why not: EKeyReused
// when the key came with another request, EInFlight (with RetryAfter)
// while the first request runs, or the stored answer to replay
// (Claim.Replay). The lab's own API claims by the process's clock.
func (r *Records) Claim(ctx context.Context, l *labs.Lab, scope, key, fingerprint string, ttl, lock time.Duration) (*Claim, error) {
	c := r.New(l, scope, key, ttl, 0)
	if done, err := c.Lookup(fingerprint); done || err != nil {
		return c, err
	}
	err := r.store.Write(ctx, func(tx *store.Tx) error { return c.Take(tx, fingerprint, lock) })
	if err != nil {
		return nil, c.Wrap(err)
	}
	c.Remember()
	return c, nil
}

// New is a claim of the key, not yet taken, whose time runs skew ahead of
// the process's (the lab's clock, for the replay protection's records).
func (r *Records) New(l *labs.Lab, scope, key string, ttl, skew time.Duration) *Claim {
	return &Claim{r: r, l: l, lab: l.ID, gen: l.Gen(), scope: scope, key: key, ttl: ttl, skew: skew}
}

// tok is who holds the claim: made when the claim is first taken (a
// request answered from memory never takes one).
func (c *Claim) tok() string {
	if c.token == "" {
		c.token = sim.NewToken()
	}
	return c.token
}

// now is the time by which the record expires.
func (c *Claim) now() time.Time { return c.r.clock.Now().Add(c.skew) }

// Wrap names the key in an error of the store; the lab's own errors pass.
func (c *Claim) Wrap(err error) error {
	if sim.ErrorCode(err) != sim.EInternal {
		return err
	}
	return fmt.Errorf("idempotency: claim %s: %w", c.key, err)
}

// Lookup answers from a finished, unexpired record of the cache: such a
// record never changes within its lab's generation until it expires, so a
// replay (or a mismatch) needs neither the writer nor the record, once the
// lab's generation is known to be current (with other processes on the
// database, a shared read of it). A record not cached, or not current, is
// found by Take, in the writer's transaction.
func (c *Claim) Lookup(fingerprint string) (done bool, err error) {
	ans, ok := c.r.cache.get(c.recordKey(), c.now().UnixMilli())
	if !ok || !c.r.current(c) {
		return false, nil
	}
	return true, c.settle(record{fingerprint: ans.fingerprint, state: "done", expiresAt: ans.expiresAt, stored: ans.stored}, fingerprint)
}

func (c *Claim) recordKey() recordKey { return recordKey{c.lab, c.gen, c.scope, c.key} }

// Remember keeps the finished record this claim found or completed, once
// its transaction has committed.
func (c *Claim) Remember() {
	if c.done != nil {
		c.r.cache.put(*c.done)
		c.done = nil
	}
}

// Take atomically claims the record in tx: a single INSERT … ON CONFLICT DO
// UPDATE that succeeds only when the key is new, expired, or left in flight
// past its lock (a crashed request). When it does not, the record says why.
// The claim records this process as its owner: only when the process is
// dead may another mend it.
func (c *Claim) Take(tx *store.Tx, fingerprint string, lock time.Duration) error {
	now := c.now()
	c.fingerprint, c.done = fingerprint, nil
	var token string
	err := tx.QueryRowStmt(c.r.claim, c.lab, c.scope, c.key, fingerprint, c.tok(),
		now.Add(lock).UnixMilli(), now.Add(c.ttl).UnixMilli(), now.UnixMilli(), c.r.store.Process()).Scan(&token)
	if err == nil {
		return nil // ours: go and do the work
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	r, err := c.read(tx.QueryRowStmt(c.r.record, c.lab, c.scope, c.key))
	if err != nil {
		return err
	}
	if r.state == "done" {
		c.done = &answer{k: c.recordKey(), fingerprint: r.fingerprint, expiresAt: r.expiresAt, stored: r.stored}
	}
	return c.settle(r, fingerprint)
}

// ErrTaken is what TakeDone's transaction fails with when the key was
// claimed already: the work it did rolls back.
var ErrTaken = errors.New("idempotency: the key is taken")

// TakeDone claims the record and stores its answer in one statement, in
// the transaction that did the work: when no other request holds the key,
// there is no moment in which anyone could see the claim in flight. When
// another does, it fails with ErrTaken, and the transaction must roll back.
// The statement may wait for the group commit (store.Tx.Later), which then
// runs again if the key was taken, and this fails with ErrTaken then.
func (c *Claim) TakeDone(tx *store.Tx, fingerprint string, lock time.Duration, st sim.Stored) error {
	now := c.now()
	c.fingerprint, c.done = fingerprint, nil
	err := tx.Later(sqlClaimDone, c.lab, c.scope, c.key, fingerprint, c.tok(), st.Status, st.Location, st.ContentType, st.Body,
		now.Add(lock).UnixMilli(), now.Add(c.ttl).UnixMilli(), now.UnixMilli(), c.r.store.Process())
	if errors.Is(err, store.ErrNotWritten) {
		return ErrTaken
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
	stored                 sim.Stored
}

func (c *Claim) read(row store.Row) (record, error) {
	var (
		r       record
		status  sql.NullInt64
		loc, ct sql.NullString
	)
	err := row.Scan(&r.fingerprint, &r.state, &r.lockedUntil, &r.expiresAt, &status, &loc, &ct, &r.stored.Body)
	r.stored.Status, r.stored.Location, r.stored.ContentType = int(status.Int64), loc.String, ct.String
	return r, err
}

// settle decides what a request gets from a record it could not claim.
func (c *Claim) settle(r record, fingerprint string) error {
	switch {
	case r.fingerprint != fingerprint:
		return sim.Errorf(sim.EKeyReused, "key-reused", sim.Clip(c.key))
	case r.state == "in-flight":
		wait := time.UnixMilli(r.lockedUntil).Sub(c.now())
		return &sim.Error{Code: sim.EInFlight, Key: "in-flight", Args: []any{sim.Clip(c.key)}, RetryAfter: wait}
	}
	st := r.stored
	c.Replay = &st
	return nil
}

// Complete stores the answer in the claimed record, inside the transaction
// that did the work, so the work and its record commit together. If the
// claim went stale and another request took the key over, it fails with
// EInFlight and the transaction must roll back.
func (c *Claim) Complete(tx *store.Tx, st sim.Stored) error {
	now := c.now()
	res, err := tx.ExecStmt(c.r.complete, st.Status, st.Location, st.ContentType, st.Body, now.Add(c.ttl).UnixMilli(), c.lab, c.scope, c.key, c.tok())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.Join(err, &sim.Error{Code: sim.EInFlight, Key: "claim-lost", Args: []any{sim.Clip(c.key)}, RetryAfter: time.Second})
	}
	c.done = &answer{k: c.recordKey(), fingerprint: c.fingerprint, expiresAt: now.Add(c.ttl).UnixMilli(), stored: st}
	return nil
}

// Finish stores the answer to a claimed request in its own transaction.
func (c *Claim) Finish(ctx context.Context, st sim.Stored) error {
	err := c.r.store.Write(ctx, func(tx *store.Tx) error { return c.Complete(tx, st) })
	if err == nil {
		c.Remember()
	}
	return err
}

// Release gives the key back after a failure, so the next retry may claim
// it at once instead of waiting for the lock to time out. It is not tied to
// ctx's end: a caller that is failing releases all the same.
func (c *Claim) Release(ctx context.Context) error {
	_, err := c.r.store.Exec(context.WithoutCancel(ctx),
		`DELETE FROM idempotency_records WHERE lab_id = ? AND scope = ? AND key = ? AND token = ? AND state = 'in-flight'`,
		c.lab, c.scope, c.key, c.tok())
	return err
}
