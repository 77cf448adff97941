package store

import (
	"context"
	"errors"
	"fmt"

	"idemlab/sim/store/pgsql"
	"idemlab/sim/store/stmts"
)

// finish ends a batch's transaction: its held writes, what its jobs told
// (tell), COMMIT. On PostgreSQL the three go in one round trip
// (pgsql.Tx.Commit). It reports false when a held write failed (b.Failed):
// the transaction rolled back, and the batch is to run again.
func (w *writer) finish(ctx context.Context, tx txn, b *pgsql.Batch, tell []pgsql.Statement) (written bool, err error) {
	if b.Failed != nil { // met by a statement of a job
		tx.Rollback()
		return false, nil
	}
	pg, ok := tx.(*pgsql.Tx)
	if !ok { // SQLite: nobody to tell
		if b.Flush(ctx, tx); b.Failed != nil {
			tx.Rollback()
			return false, nil
		}
		return true, tx.(*stmts.WriteTx).Commit()
	}
	held, err := b.Statements()
	if err != nil {
		b.Failed = err
		pg.Rollback()
		return false, nil
	}
	failed, err := pg.Commit(ctx, append(held, tell...))
	if err != nil && failed < len(held) && pgsql.Code(err) != "" {
		// Refused by the database: the COMMIT behind it did not run. (A broken
		// connection says nothing of which ran: settle asks.)
		b.Failed = pgsql.NotWritten(err)
		return false, nil
	}
	return true, err
}

// inSavepoint runs fn so that its failure undoes only its own writes.
func (w *writer) inSavepoint(ctx context.Context, tx *Tx, fn func(*Tx) error) error {
	if err := w.exec(ctx, tx.tx, "SAVEPOINT job"); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	err := call(fn, tx)
	var pe *PanicError
	if errors.As(err, &pe) {
		return err // the whole transaction rolls back
	}
	if err != nil {
		tx.b.Forget() // what the job counted was rolled back
		if rerr := w.exec(ctx, tx.tx, "ROLLBACK TO job"); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	if rerr := w.exec(ctx, tx.tx, "RELEASE job"); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}

// exec runs a savepoint's statement (SQLite's compiled on its connection,
// as every statement of its transactions).
func (w *writer) exec(ctx context.Context, tx txn, q string) error {
	_, err := tx.ExecContext(ctx, q)
	return err
}
