package client

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
)

const operationColumns = `id, seq, order_id, amount, method, key_strategy, key, created_at`

// Operation returns an operation of the lab with its attempts, or
// ENotFound; sim.LatestOperation names the newest.
func (c *Client) Operation(ctx context.Context, l *labs.Lab, id string) (sim.Operation, error) {
	// Two statements, not one with an OR: each is one step down an index.
	q := `SELECT ` + operationColumns + ` FROM operations WHERE lab_id = ? AND id = ?`
	args := []any{l.ID, id}
	if id == sim.LatestOperation {
		q = `SELECT ` + operationColumns + ` FROM operations WHERE lab_id = ? ORDER BY seq DESC LIMIT 1`
		args = args[:1]
	}
	ops, err := c.operations(ctx, q, args...)
	switch {
	case err != nil:
		return sim.Operation{}, fmt.Errorf("client: load operation %s: %w", id, err)
	case len(ops) == 0 && id == sim.LatestOperation:
		return sim.Operation{}, sim.Errorf(sim.ENotFound, "no-operation-yet")
	case len(ops) == 0:
		return sim.Operation{}, sim.Errorf(sim.ENotFound, "no-operation", sim.Clip(id))
	}
	if err := c.loadAttempts(ctx, l, ops); err != nil {
		return sim.Operation{}, err
	}
	return *ops[0], nil
}

// Operations returns the lab's latest operations, newest first.
func (c *Client) Operations(ctx context.Context, l *labs.Lab, limit int) ([]sim.Operation, error) {
	ops, err := c.operations(ctx, `SELECT `+operationColumns+` FROM operations WHERE lab_id = ? ORDER BY seq DESC LIMIT ?`, l.ID, limit)
	if err != nil {
		return nil, fmt.Errorf("client: operations of %s: %w", l.ID, err)
	}
	if err := c.loadAttempts(ctx, l, ops); err != nil {
		return nil, err
	}
	out := make([]sim.Operation, len(ops))
	for i, op := range ops {
		out[i] = *op
	}
	return out, nil
}

func (c *Client) operations(ctx context.Context, query string, args ...any) ([]*sim.Operation, error) {
	rows, err := c.Store.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ops []*sim.Operation
	for rows.Next() {
		var (
			op sim.Operation
			at int64
		)
		if err := rows.Scan(&op.ID, &op.Seq, &op.OrderID, &op.Amount, &op.Method, &op.KeyStrategy, &op.Key, &at); err != nil {
			return nil, err
		}
		op.CreatedAt = time.UnixMilli(at).UTC()
		ops = append(ops, &op)
	}
	return ops, rows.Err()
}

func (c *Client) loadAttempts(ctx context.Context, l *labs.Lab, ops []*sim.Operation) error {
	for _, op := range ops {
		if err := c.attemptsOf(ctx, l, op); err != nil {
			return fmt.Errorf("client: attempts of %s: %w", op.ID, err)
		}
	}
	return nil
}

func (c *Client) attemptsOf(ctx context.Context, l *labs.Lab, op *sim.Operation) error {
	rows, err := c.Store.Query(ctx, `
SELECT n, key, fate, status, error, outcome, deliveries, started_at, finished_at
FROM attempts WHERE lab_id = ? AND op_id = ? ORDER BY n`, l.ID, op.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	op.Attempts = []sim.Attempt{}
	for rows.Next() {
		var (
			a          sim.Attempt
			deliveries string
			started    int64
			finished   sql.NullInt64
		)
		if err := rows.Scan(&a.N, &a.Key, &a.Fate, &a.Status, &a.Error, &a.Outcome, &deliveries, &started, &finished); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(deliveries), &a.Deliveries); err != nil {
			return fmt.Errorf("attempt %d's deliveries: %w", a.N, err)
		}
		a.StartedAt = time.UnixMilli(started).UTC()
		if finished.Valid {
			t := time.UnixMilli(finished.Int64).UTC()
			a.FinishedAt = &t
		}
		op.Attempts = append(op.Attempts, a)
	}
	return rows.Err()
}

// OperationID is the id of the lab's operation number seq; 0 names the latest.
func (c *Client) OperationID(ctx context.Context, l *labs.Lab, seq int) (string, error) {
	if seq == 0 {
		return sim.LatestOperation, nil
	}
	var id string
	err := c.Store.QueryRow(ctx, `SELECT id FROM operations WHERE lab_id = ? AND seq = ?`, l.ID, seq).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", sim.Invalid(sim.Broke("op", "no-operation", seq))
	}
	return id, err
}

// RunScript runs the script's steps in the lab, in order.
func (c *Client) RunScript(ctx context.Context, l *labs.Lab, s sim.Script) error {
	for i, st := range s.Steps {
		var err error
		switch st.Action {
		case "charge":
			_, err = c.Start(ctx, l, sim.OperationRequest{OrderID: s.OrderID, Amount: s.Amount, Fate: st.Fate})
		case "retry":
			_, err = c.Retry(ctx, l, sim.LatestOperation, st.WithKey, st.Fate)
		default:
			err = sim.Invalid(sim.Broke(fmt.Sprintf("steps[%d].action", i), "one-of", sim.Quoted([]string{"charge", "retry"})))
		}
		if err != nil {
			return fmt.Errorf("script step %d (%s): %w", i+1, st.Action, err)
		}
	}
	return nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are marshalled here
	}
	return string(b)
}
