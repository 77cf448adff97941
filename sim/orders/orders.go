// Package orders is the lab's order resource, for the HTTP methods' lesson:
// methods idempotent by contract (RFC 9110, 9.2.2). PUT sets an order to the
// state it carries, DELETE removes it: sent twice, each leaves the state as
// once; only DELETE's answer differs (204, then 404).
package orders

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// Orders are the labs' orders.
type Orders struct {
	store *store.Store
	labs  *labs.Registry // records the changes sent straight to the API, for the scenario
	bus   *events.Bus
	clock clock.Clock
}

// New returns the orders of the store.
func New(s *store.Store, reg *labs.Registry, bus *events.Bus, c clock.Clock) *Orders {
	return &Orders{store: s, labs: reg, bus: bus, clock: c}
}

// Sender says who sent a PUT or a DELETE: the lab's own client (its
// operation is in the lab's scenario already) or someone straight through
// the API, whose change the scenario records, so that the lab's link
// rebuilds it.
type Sender bool

// The senders of a change.
const (
	ByClient Sender = false
	Direct   Sender = true
)

// record writes a change sent straight to the API into the lab's
// scenario, in the change's transaction.
func (o *Orders) record(tx *store.Tx, l *labs.Lab, by Sender, method, orderID string, amount int64) error {
	if by != Direct {
		return nil
	}
	return o.labs.Record(tx, l.ID, sim.Action{Kind: "direct", Method: method, OrderID: orderID, Amount: amount})
}

// Room is the orders' part in a lab's life.
func (o *Orders) Room() labs.Room {
	return labs.Tables{
		Store:  o.store,
		Resets: []string{`DELETE FROM orders WHERE lab_id = ?1`},
		Purges: []string{`DELETE FROM orders WHERE (lab_id, order_id) IN (SELECT lab_id, order_id FROM orders WHERE lab_id = ?1 LIMIT ?2)`},
	}
}

// Put sets the order to amount; created says it did not exist. A PUT of
// the state the order has changes nothing, its updated_at included (PUT is
// idempotent by contract), and answers with the order as it stands.
func (o *Orders) Put(ctx context.Context, l *labs.Lab, by Sender, orderID string, amount int64) (ord sim.Order, created bool, err error) {
	if err := (sim.Charge{OrderID: orderID, Amount: amount}).Validate(); err != nil {
		return sim.Order{}, false, err
	}
	now := o.clock.Now().UnixMilli()
	at, changed := now, false
	err = o.store.Write(ctx, func(tx *store.Tx) error {
		var had int64
		err := tx.QueryRow(`SELECT amount, updated_at FROM orders WHERE lab_id = ? AND order_id = ?`, l.ID, orderID).Scan(&had, &at)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			created = true
		case err != nil:
			return err
		case had == amount:
			return nil // as it is: nothing to write
		}
		at, changed = now, true
		if _, err := tx.Exec(`INSERT INTO orders (lab_id, order_id, amount, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (lab_id, order_id) DO UPDATE SET amount = excluded.amount, updated_at = excluded.updated_at`,
			l.ID, orderID, amount, now); err != nil {
			return err
		}
		return o.record(tx, l, by, sim.MethodPut, orderID, amount)
	})
	if err != nil {
		return sim.Order{}, false, labs.Failed(l.ID, "orders: put "+orderID, err)
	}
	if changed {
		o.bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventOrder, OrderID: orderID})
	}
	return sim.Order{OrderID: orderID, Amount: amount, UpdatedAt: time.UnixMilli(at).UTC()}, created, nil
}

// Delete removes the order; ENotFound when there is none (already removed,
// or never set).
func (o *Orders) Delete(ctx context.Context, l *labs.Lab, by Sender, orderID string) error {
	if err := (sim.Charge{OrderID: orderID, Amount: 1}).Validate(); err != nil {
		return err
	}
	removed := false
	err := o.store.Write(ctx, func(tx *store.Tx) error {
		res, err := tx.Exec(`DELETE FROM orders WHERE lab_id = ? AND order_id = ?`, l.ID, orderID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		removed = true
		return o.record(tx, l, by, sim.MethodDelete, orderID, 0)
	})
	if err != nil {
		return labs.Failed(l.ID, "orders: delete "+orderID, err)
	}
	if !removed {
		return sim.Errorf(sim.ENotFound, "no-order", sim.Clip(orderID))
	}
	o.bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventOrder, OrderID: orderID})
	return nil
}

// List lists the lab's orders, at most limit, by order id, with how many
// there are.
func (o *Orders) List(ctx context.Context, l *labs.Lab, limit int) ([]sim.Order, int64, error) {
	var count int64
	if err := o.store.QueryRow(ctx, `SELECT COUNT(*) FROM orders WHERE lab_id = ?`, l.ID).Scan(&count); err != nil {
		return nil, 0, fmt.Errorf("orders of %s: %w", l.ID, err)
	}
	rows, err := o.store.Query(ctx, `SELECT order_id, amount, updated_at FROM orders WHERE lab_id = ? ORDER BY order_id LIMIT ?`, l.ID, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("orders of %s: %w", l.ID, err)
	}
	defer rows.Close()
	out := []sim.Order{}
	for rows.Next() {
		var (
			ord sim.Order
			at  int64
		)
		if err := rows.Scan(&ord.OrderID, &ord.Amount, &at); err != nil {
			return nil, 0, err
		}
		ord.UpdatedAt = time.UnixMilli(at).UTC()
		out = append(out, ord)
	}
	return out, count, rows.Err()
}
