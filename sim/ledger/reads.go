package ledger

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

// Totals returns the lab's counts.
func (g *Ledger) Totals(ctx context.Context, l *labs.Lab) (sim.Totals, error) {
	var t sim.Totals
	err := g.Store.QueryRow(ctx, `SELECT payments, total, doubled, overcharged FROM lab_counts WHERE lab_id = ?`, l.ID).
		Scan(&t.Payments, &t.Total, &t.Doubled, &t.Overcharged)
	if errors.Is(err, sql.ErrNoRows) {
		return t, sim.NoLab(l.ID)
	}
	if err != nil {
		return t, fmt.Errorf("ledger: totals of %s: %w", l.ID, err)
	}
	return t, nil
}

const paymentColumns = `n, order_id, amount, idempotency_key, created_at`

// Payments returns a page of the lab's payments, newest first; Totals
// counts the whole ledger.
func (g *Ledger) Payments(ctx context.Context, l *labs.Lab, limit, offset int) ([]sim.Payment, error) {
	ps, err := g.payments(ctx, `SELECT `+paymentColumns+` FROM payments WHERE lab_id = ? ORDER BY n DESC LIMIT ? OFFSET ?`, l.ID, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("ledger: payments of %s: %w", l.ID, err)
	}
	if ps == nil {
		ps = []sim.Payment{}
	}
	return ps, nil
}

// DirectCharges returns the first `most` payments of the lab that were sent
// straight to the API rather than by its client, oldest first, and how many
// there are in all.
func (g *Ledger) DirectCharges(ctx context.Context, l *labs.Lab, most int) ([]sim.Payment, int64, error) {
	var n int64
	if err := g.Store.QueryRow(ctx, `SELECT COUNT(*) FROM payments WHERE lab_id = ? AND direct`, l.ID).Scan(&n); err != nil {
		return nil, 0, fmt.Errorf("ledger: direct charges of %s: %w", l.ID, err)
	}
	ps, err := g.payments(ctx, `SELECT `+paymentColumns+` FROM payments WHERE lab_id = ? AND direct ORDER BY n LIMIT ?`, l.ID, most)
	if err != nil {
		return nil, 0, fmt.Errorf("ledger: direct charges of %s: %w", l.ID, err)
	}
	return ps, n, nil
}

// Payment returns one payment of the lab, or ENotFound.
func (g *Ledger) Payment(ctx context.Context, l *labs.Lab, id int64) (sim.Payment, error) {
	ps, err := g.payments(ctx, `SELECT `+paymentColumns+` FROM payments WHERE lab_id = ? AND n = ?`, l.ID, id)
	if err != nil {
		return sim.Payment{}, fmt.Errorf("ledger: payment %d of %s: %w", id, l.ID, err)
	}
	if len(ps) == 0 {
		return sim.Payment{}, sim.Errorf(sim.ENotFound, "no-payment", id)
	}
	return ps[0], nil
}

func (g *Ledger) payments(ctx context.Context, query string, args ...any) ([]sim.Payment, error) {
	rows, err := g.Store.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ps []sim.Payment
	for rows.Next() {
		var (
			p  sim.Payment
			at int64
		)
		if err := rows.Scan(&p.ID, &p.OrderID, &p.Amount, &p.IdempotencyKey, &at); err != nil {
			return nil, err
		}
		p.CreatedAt = time.UnixMilli(at).UTC()
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

// DoubleCharges lists at most the first `most` orders of the lab charged
// more than once, in the order of their first charge; Totals counts them all.
func (g *Ledger) DoubleCharges(ctx context.Context, l *labs.Lab, most int) ([]sim.DoubleCharge, error) {
	rows, err := g.Store.Query(ctx, `
SELECT order_id, charges, total - first_amount, purchases FROM order_stats
WHERE lab_id = ? AND charges > 1 ORDER BY first_n LIMIT ?`, l.ID, most)
	if err != nil {
		return nil, fmt.Errorf("ledger: double charges of %s: %w", l.ID, err)
	}
	defer rows.Close()
	var out []sim.DoubleCharge
	for rows.Next() {
		var d sim.DoubleCharge
		if err := rows.Scan(&d.OrderID, &d.Times, &d.Extra, &d.Purchases); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// LostCharges lists at most `most` orders of the lab that the server told
// "already done" (a duplicate, a replay) and that have no payment: the
// customer believes they paid, and nobody was charged. The count is of all.
func (g *Ledger) LostCharges(ctx context.Context, l *labs.Lab, most int) ([]string, int, error) {
	// Through the orders told done and never charged only (their partial
	// index), not through all the lab's orders: the cost stays flat.
	rows, err := g.Store.Query(ctx, `SELECT order_id FROM order_stats`+store.IndexedBy(g.Store, "order_stats_lost")+`
WHERE lab_id = ? AND told_done > 0 AND charges = 0 ORDER BY order_id`, l.ID)
	if err != nil {
		return nil, 0, fmt.Errorf("lost charges of %s: %w", l.ID, err)
	}
	defer rows.Close()
	var (
		out []string
		n   int
	)
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			return nil, 0, err
		}
		if n++; len(out) < most {
			out = append(out, o)
		}
	}
	return out, n, rows.Err()
}

// OrderCharges is how many payments the lab's order has.
func (g *Ledger) OrderCharges(ctx context.Context, l *labs.Lab, orderID string) (int64, error) {
	var n int64
	err := g.Store.QueryRow(ctx, `SELECT charges FROM order_stats WHERE lab_id = ? AND order_id = ?`, l.ID, orderID).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("ledger: charges of %s in %s: %w", orderID, l.ID, err)
	}
	return n, nil
}
