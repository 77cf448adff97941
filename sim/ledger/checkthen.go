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
		var n int
		if err := g.checkKey.QueryRow(ctx, l.ID, *c.Key).Scan(&n); err != nil {
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
	err := g.committing(isolated, func(tx *store.Tx) error {
		var n int
		if err := tx.QueryRowStmt(g.checkKey, l.ID, *c.Key).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			res = duplicate()
			return nil
		}
		g.pause(ctx, s.CheckGapMS)
		g.work(ctx, s)
		if err := tx.LockKey(l.ID); err != nil {
			return err
		}
		p, err := g.write(tx, l, c, nil, false)
		if err != nil {
			return err
		}
		res = charged(p)
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
