package ledger

import (
	"context"
	"database/sql"
	"errors"

	"idemlab/sim"
	"idemlab/sim/labs"
)

// onConflict is protection "on-conflict": INSERT … ON CONFLICT (lab, key)
// DO NOTHING. The database skips the duplicate; no exception reaches the
// code, and no row comes back.
type onConflict struct{ g *Ledger }

func (o onConflict) charge(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings) (Result, error) {
	o.g.work(ctx, s)
	pay, err := o.g.insertOne(ctx, l, c, s, c.Key, true)
	if errors.Is(err, sql.ErrNoRows) {
		return duplicate(), nil
	}
	if err != nil {
		return Result{}, charging(l, c, err)
	}
	return charged(pay), nil
}
