package sim

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// The orders: a resource whose methods are idempotent by contract (RFC
// 9110, 9.2.2). PUT sets an order to the state it carries, DELETE removes
// it: sent twice, each leaves the state as once; only DELETE's answer
// differs (204, then 404).

// Order is one order of the lab's resource.
type Order struct {
	OrderID   string    `json:"order_id"`
	Amount    int64     `json:"amount"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PutOrder sets the order to amount; created says it did not exist.
func (e *Engine) PutOrder(ctx context.Context, l *Lab, orderID string, amount int64) (o Order, created bool, err error) {
	if err := (Charge{OrderID: orderID, Amount: amount}).Validate(); err != nil {
		return Order{}, false, err
	}
	o = Order{OrderID: orderID, Amount: amount, UpdatedAt: e.now().UTC()}
	err = e.store.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM orders WHERE lab_id = ? AND order_id = ?`, l.ID, orderID).Scan(&n); err != nil {
			return err
		}
		created = n == 0
		_, err := tx.ExecContext(ctx, `INSERT INTO orders (lab_id, order_id, amount, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (lab_id, order_id) DO UPDATE SET amount = excluded.amount, updated_at = excluded.updated_at`,
			l.ID, orderID, amount, o.UpdatedAt.Format(time.RFC3339Nano))
		return err
	})
	if err != nil {
		return Order{}, false, e.failed(l, "orders: put "+orderID, err)
	}
	e.emit(Event{Lab: l.ID, Kind: EventOrder, OrderID: orderID})
	return o, created, nil
}

// DeleteOrder removes the order; ENotFound when there is none (already
// removed, or never set).
func (e *Engine) DeleteOrder(ctx context.Context, l *Lab, orderID string) error {
	if err := (Charge{OrderID: orderID, Amount: 1}).Validate(); err != nil {
		return err
	}
	var n int64
	err := e.store.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM orders WHERE lab_id = ? AND order_id = ?`, l.ID, orderID)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return e.failed(l, "orders: delete "+orderID, err)
	}
	if n == 0 {
		return Errorf(ENotFound, "no-order", clip(orderID))
	}
	e.emit(Event{Lab: l.ID, Kind: EventOrder, OrderID: orderID})
	return nil
}

// Orders lists the lab's orders, at most limit, by order id, with how many
// there are.
func (e *Engine) Orders(ctx context.Context, l *Lab, limit int) ([]Order, int64, error) {
	var count int64
	if err := e.store.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM orders WHERE lab_id = ?`, l.ID).Scan(&count); err != nil {
		return nil, 0, fmt.Errorf("orders of %s: %w", l.ID, err)
	}
	rows, err := e.store.r.QueryContext(ctx, `SELECT order_id, amount, updated_at FROM orders WHERE lab_id = ? ORDER BY order_id LIMIT ?`, l.ID, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("orders of %s: %w", l.ID, err)
	}
	defer rows.Close()
	out := []Order{}
	for rows.Next() {
		var (
			o  Order
			at string
		)
		if err := rows.Scan(&o.OrderID, &o.Amount, &at); err != nil {
			return nil, 0, err
		}
		o.UpdatedAt, _ = time.Parse(time.RFC3339Nano, at)
		out = append(out, o)
	}
	return out, count, rows.Err()
}
