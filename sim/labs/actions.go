package labs

import (
	"context"

	"idemlab/sim"
	"idemlab/sim/store"
)

// actions is what was done to each lab, for its scenario's link: a "base"
// row (its settings then) and every action after it, in order.
type actions struct {
	next, insert *store.Stmt
}

func (a *actions) prepare(ctx context.Context, s *store.Store) error {
	var err error
	// The next action's number (a "base" starts the list anew).
	if a.next, err = s.Prepare(ctx, `
UPDATE lab_counts SET action_seq = action_seq + 1, base_seq = CASE WHEN ?1 THEN action_seq + 1 ELSE base_seq END
WHERE lab_id = ?2 RETURNING action_seq, base_seq`); err != nil {
		return err
	}
	a.insert, err = s.Prepare(ctx, `INSERT INTO lab_actions (lab_id, seq, action) VALUES (?, ?, ?)`)
	return err
}

// Record appends an action to the lab's list in tx; "base" starts the list
// anew. Past sim.MaxScenarioActions since the base, actions are counted but
// no longer kept: no link could carry them.
func (r *Registry) Record(tx *store.Tx, lab string, a sim.Action) error {
	base := a.Kind == "base"
	if !base && tx.Holding() {
		return recordHeld(tx, lab, a)
	}
	var seq, baseSeq int64
	if err := tx.QueryRowStmt(r.acts.next, base, lab).Scan(&seq, &baseSeq); err != nil {
		return err
	}
	if base {
		if _, err := tx.Exec(`DELETE FROM lab_actions WHERE lab_id = ?`, lab); err != nil {
			return err
		}
	}
	if seq-baseSeq > sim.MaxScenarioActions {
		return nil
	}
	_, err := tx.ExecStmt(r.acts.insert, lab, seq, mustJSON(a))
	return err
}

// The same for a group commit's action, as writes held for its commit
// (store.Tx.Later): the numbers counted in memory under the lab's lock
// (store.Tx.Next), and the lab's counter set to the last once.
const (
	sqlLastAction   = `SELECT action_seq, action_seq - base_seq FROM lab_counts WHERE lab_id = ?1`
	sqlInsertAction = `INSERT INTO lab_actions (lab_id, seq, action) VALUES (?1, ?2, ?3)`
	sqlActionSeq    = `UPDATE lab_counts SET action_seq = CASE WHEN action_seq < ?2 THEN ?2 ELSE action_seq END WHERE lab_id = ?1`
)

func recordHeld(tx *store.Tx, lab string, a sim.Action) error {
	ns, err := tx.NextRow(sqlLastAction, lab) // the action's number, and how many since the base
	if err != nil {
		return err
	}
	if err := tx.Finally(sqlActionSeq, lab, ns[0]); err != nil || ns[1] > sim.MaxScenarioActions {
		return err
	}
	return tx.Later(sqlInsertAction, lab, ns[0], mustJSON(a))
}
