package ledger

import (
	"context"
	"errors"
	"time"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/idempotency"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// replay is protection "replay" (IETF Idempotency-Key draft, Stripe): the
// key's idempotency record is claimed, the work done, and in one
// transaction the payment written and its answer stored; a retry gets that
// stored answer back, byte for byte, marked as replayed. A key reused with
// another body is 422; a key whose first request still runs, 409.
type replay struct{ g *Ledger }

func (rp replay) charge(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings) (Result, error) {
	if c.Key == nil {
		return Result{}, sim.Errorf(sim.EKeyMissing, "key-missing")
	}
	fp := c.Fingerprint()
	claim := rp.g.Records.New(l, idempotency.ScopeCharges, *c.Key, time.Duration(s.KeyTTLS)*time.Second, l.Clock())
	if err := at(ctx, sim.PointClaim, nil); err != nil {
		return Result{}, err
	}
	done, err := claim.Lookup(fp)
	if done || err != nil {
		did(ctx, sim.PointClaim, "SELECT … FROM idempotency_records WHERE lab_id = ? AND key = ?", claimed(claim, err))
	}
	var res Result
	switch {
	case err != nil || done:
	case s.ServerDelayMS == 0 && s.ServerFault == sim.FaultNone && !stepped(ctx):
		res, err = rp.atOnce(ctx, l, c, s, claim, fp)
	default:
		res, err = rp.inTwo(ctx, l, c, s, claim, fp)
	}
	if err != nil {
		return Result{}, labs.Gone(l.ID, claim.Wrap(err))
	}
	claim.Remember()
	if r := claim.Replay; r != nil {
		return Result{Outcome: sim.OutcomeReplayed, Replay: r}, nil
	}
	return res, nil
}

// atOnce is a charge with no work to wait for: claim, payment and answer
// commit in one transaction, so there is no moment in which another request
// could see the claim in flight. The payment first, then the claim with its
// answer in the same statement: a new key (the usual case) costs one
// statement less. When the key is taken, both roll back and the usual way
// decides.
func (rp replay) atOnce(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings, claim *idempotency.Claim, fp string) (Result, error) {
	var res Result
	lock := time.Duration(s.LockTimeoutMS) * time.Millisecond
	err := rp.g.committing(rp.writer(ctx, l, s), func(tx *store.Tx) error {
		p, err := rp.g.write(tx, l, c, nil, false)
		if err != nil {
			return err
		}
		res = answered(l, p)
		return claim.TakeDone(tx, fp, lock, *res.Answer)
	})
	if !errors.Is(err, idempotency.ErrTaken) {
		return res, err
	}
	res = Result{}
	err = rp.g.committing(rp.writer(ctx, l, s), func(tx *store.Tx) error {
		if err := claim.Take(tx, fp, lock); err != nil || claim.Replay != nil {
			return err
		}
		return rp.complete(ctx, tx, l, c, claim, &res)
	})
	return res, err
}

// inTwo is a charge with work between the claim and the payment: the claim
// commits first, in flight, and a retry meanwhile gets 409. A server that
// dies after the claim leaves it claimed until its lock times out.
func (rp replay) inTwo(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings, claim *idempotency.Claim, fp string) (Result, error) {
	lock := time.Duration(s.LockTimeoutMS) * time.Millisecond
	err := rp.g.Store.Write(ctx, func(tx *store.Tx) error { return claim.Take(tx, fp, lock) })
	did(ctx, sim.PointClaim, sqlClaim, claimed(claim, err))
	if err != nil || claim.Replay != nil {
		return Result{}, err
	}
	if err := crashBeforeCommit(s); err != nil {
		return Result{}, err
	}
	rp.g.work(ctx, s)
	var res Result
	if err = at(ctx, sim.PointCharge, nil); err == nil {
		err = rp.g.committing(rp.writer(ctx, l, s), func(tx *store.Tx) error { return rp.complete(ctx, tx, l, c, claim, &res) })
	}
	if err != nil && (sim.ErrorCode(err) == sim.EInternal || errors.Is(err, sim.ErrStepAborted)) {
		if rerr := claim.Release(ctx); rerr != nil {
			rp.g.Log.Warn("release idempotency claim", "lab", l.ID, "key", c.KeyText(), "err", rerr)
		}
	}
	return res, err
}

// writer is the store's writer of the lab's payments, for ctx; a stepped
// charge's on PostgreSQL is a transaction of its own, stopped at its points.
func (rp replay) writer(ctx context.Context, l *labs.Lab, s sim.Settings) func(func(*store.Tx) error) error {
	if stepped(ctx) && rp.g.Store.Postgres() {
		return func(fn func(*store.Tx) error) error {
			return rp.g.steppedTx(ctx, s, func(tx *store.Tx) error {
				if err := tx.LockKey(l.ID); err != nil {
					did(ctx, sim.PointCharge, sqlInsertPayment, failed(err))
					return err
				}
				return fn(tx)
			})
		}
	}
	return func(fn func(*store.Tx) error) error { return rp.g.Store.WriteLab(ctx, l.ID, fn) }
}

// complete writes the payment and stores its answer in the claimed record;
// a stepped charge on PostgreSQL stops between the two.
func (rp replay) complete(ctx context.Context, tx *store.Tx, l *labs.Lab, c sim.Charge, claim *idempotency.Claim, res *Result) error {
	p, err := rp.g.write(tx, l, c, nil, false)
	if !stepped(ctx) || !rp.g.Store.Postgres() {
		defer func() {
			did(ctx, sim.PointCharge, sqlInsertAnswerCommit, insertResult(p, err))
		}()
	} else if did(ctx, sim.PointCharge, sqlInsertPayment, insertResult(p, err)); err == nil {
		if err = at(ctx, sim.PointStore, tx); err != nil {
			return err
		}
		defer func() { did(ctx, sim.PointStore, sqlComplete, stored(err)) }()
	}
	if err != nil {
		return err
	}
	*res = answered(l, p)
	return claim.Complete(tx, *res.Answer)
}

// answered is a new payment's result with its answer, the one the claim
// stores and the request is sent: made once.
func answered(l *labs.Lab, p *sim.Payment) Result {
	a := api.Charged(l.ID, *p)
	return Result{Outcome: sim.OutcomeCharged, Payment: p, Answer: &a}
}

// The statements of replay's claim and answer, as a stepped race's log
// shows them (sim/idempotency runs them).
const (
	sqlClaim    = `INSERT INTO idempotency_records … ON CONFLICT (lab_id, scope, key) DO UPDATE … WHERE expired or left in flight`
	sqlComplete = `UPDATE idempotency_records SET state = 'done', status = ?, body = ? WHERE … AND owner = ?`
)

// claimed is what the claim of the key found.
func claimed(c *idempotency.Claim, err error) sim.StepResult {
	switch {
	case err == nil && c.Replay != nil:
		return sim.StepResult{Code: sim.StepReplayed}
	case err == nil:
		return sim.StepResult{Code: sim.StepClaimed}
	case sim.ErrorCode(err) == sim.EInFlight:
		return sim.StepResult{Code: sim.StepInFlight}
	case sim.ErrorCode(err) == sim.EKeyReused:
		return sim.StepResult{Code: sim.StepMismatch}
	}
	return failed(err)
}

// stored is what storing the answer did.
func stored(err error) sim.StepResult {
	if err != nil {
		return failed(err)
	}
	return sim.StepResult{Code: sim.StepStored}
}
