package ledger

import (
	"context"

	"idemlab/sim"
	"idemlab/sim/labs"
)

// plain is protection "none": a plain INSERT. Every request charges, the
// article's first listing: a retry after a lost answer charges twice.
type plain struct{ g *Ledger }

func (p plain) charge(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings) (Result, error) {
	p.g.work(ctx, s)
	pay, err := p.g.insertOne(ctx, l, c, s, nil, false)
	if err != nil {
		return Result{}, charging(l, c, err)
	}
	return charged(pay), nil
}
