package ledger

import (
	"context"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// unique is protection "unique": the INSERT writes the key into the column
// a UNIQUE constraint guards, and the constraint's error is caught, as the
// article's second listing does: a retry is a duplicate.
type unique struct{ g *Ledger }

func (u unique) charge(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings) (Result, error) {
	u.g.work(ctx, s)
	pay, err := u.g.insertOne(ctx, l, c, s, c.Key, false)
	if store.IsUnique(err) {
		return duplicate(), nil
	}
	if err != nil {
		return Result{}, charging(l, c, err)
	}
	return charged(pay), nil
}
