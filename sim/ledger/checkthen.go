package ledger

import (
	"context"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// checkThenInsert is protection "check-then-insert", the race the article
// warns about: a SELECT for the key, then, in a separate statement, the
// INSERT. Two retries that both run their SELECT before either INSERT both
// charge; check_gap_ms widens the window between them.
type checkThenInsert struct{ g *Ledger }

func (ct checkThenInsert) charge(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings) (Result, error) {
	g := ct.g
	if c.Key != nil && g.Store.Postgres() {
		return ct.inOneTx(ctx, l, c, s)
	}
	if c.Key != nil {
		if err := at(ctx, sim.PointSelect, nil); err != nil {
			return Result{}, err
		}
		var n int
		err := g.checkKey.QueryRow(ctx, l.ID, *c.Key).Scan(&n)
		didSelect(ctx, n, err)
		if err != nil {
			return Result{}, charging(l, c, err)
		}
		if n > 0 {
			return duplicate(), nil
		}
		g.pause(ctx, s.CheckGapMS)
	}
	return plain(ct).charge(ctx, l, c, s)
}

// inOneTx is check-then-insert on PostgreSQL: the SELECT and the INSERT in
// one transaction at the lab's isolation level. The lab's lock, which
// numbers its payments, is taken after the SELECT and the gap, so that two
// racers both look before either writes. Under READ COMMITTED both find nothing and both charge;
// under SERIALIZABLE the second to commit fails with 40001, answered 409
// with Retry-After: its retry finds the payment.
func (ct checkThenInsert) inOneTx(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings) (Result, error) {
	g := ct.g
	var res Result
	isolated := func(fn func(*store.Tx) error) error {
		return g.Store.Isolated(ctx, s.Isolation == sim.IsolationSerializable, fn)
	}
	if stepped(ctx) {
		if err := at(ctx, sim.PointSelect, nil); err != nil {
			return Result{}, err
		}
		isolated = func(fn func(*store.Tx) error) error { return g.steppedTx(ctx, s, fn) }
	}
	err := g.committing(isolated, func(tx *store.Tx) error {
		var n int
		err := tx.QueryRowStmt(g.checkKey, l.ID, *c.Key).Scan(&n)
		didSelect(ctx, n, err)
		if err != nil {
			return err
		}
		if n > 0 {
			res = duplicate()
			return nil
		}
		g.pause(ctx, s.CheckGapMS)
		g.work(ctx, s)
		if err := at(ctx, sim.PointInsert, tx); err != nil {
			return err
		}
		if err := tx.LockKey(l.ID); err != nil {
			did(ctx, sim.PointInsert, sqlInsertPayment, failed(err))
			return err
		}
		p, err := g.write(tx, l, c, nil, false)
		did(ctx, sim.PointInsert, sqlInsertPayment, insertResult(p, err))
		if err != nil {
			return err
		}
		res = charged(p)
		if stepped(ctx) {
			return nil // the stop before the COMMIT, and the crash, are steppedTx's
		}
		return crashBeforeCommit(s)
	})
	if store.IsSerialization(err) {
		return Result{}, &sim.Error{Code: sim.EConflict, Key: "conflict", Args: []any{c.KeyText()}, RetryAfter: time.Second}
	}
	if err != nil {
		return Result{}, charging(l, c, err)
	}
	return res, nil
}

// didSelect tells a stepped charge what its SELECT for the key found. The
// result is made only for a stepped charge: it holds its count by
// pointer (0 is said too), which a charge nobody steps need not allocate.
func didSelect(ctx context.Context, n int, err error) {
	if !stepped(ctx) {
		return
	}
	r := sim.Found(int64(n))
	if err != nil {
		r = failed(err)
	}
	did(ctx, sim.PointSelect, sqlCheckKey, r)
}
