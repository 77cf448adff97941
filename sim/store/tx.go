package store

import (
	"context"
	"database/sql"
	"errors"

	"idemlab/sim/store/pgsql"
	"idemlab/sim/store/stmts"
)

// Tx is a writing transaction as the function that runs in it receives it:
// its statements run in the transaction and under the context of the
// caller who asked for it. Commit and rollback are the writer's.
type Tx struct {
	ctx context.Context
	tx  txn // SQLite's *stmts.WriteTx, or PostgreSQL's *pgsql.Tx
	// told is the writer's, when someone listens: what the transaction
	// tells the other processes (Notify), numbered by an.
	told *[]Told
	an   *announcer
	last int64        // the number of the last notice this job told; 0: none
	b    *pgsql.Batch // the group commit's; nil for a transaction of its own
}

// Row is the row a statement answered (Tx.QueryRowStmt), as *sql.Row is.
type Row interface {
	Scan(dest ...any) error
}

// txn is a writing transaction: SQLite's (stmts.WriteTx), or PostgreSQL's
// (pgsql.Tx).
type txn interface {
	pgsql.Session
	Rollback() error
}

// ErrNotWritten is what Later gets when its row was not written.
var ErrNotWritten = pgsql.ErrNotWritten

// sync readies the transaction for a statement that must see its writes:
// the held ones go first, and the numbers counted are asked again (the
// statement may write such a row).
func (t *Tx) sync() error {
	t.b.Forget()
	return t.b.Flush(t.ctx, t.tx)
}

// Later writes one row with a single-row INSERT (pgsql.Fold's kind) that
// must write it, and fails with ErrNotWritten when it does not (a conflict
// its statement leaves alone). In the first run of a PostgreSQL lab
// writer's group commit, it is held until a statement must see it or the
// commit, and goes with the batch's others of its text in one statement:
// a row not written then fails the whole batch, which runs again with each
// statement at once, and the caller's own error where it belongs.
func (t *Tx) Later(query string, args ...any) error {
	if t.Holding() {
		t.b.Add(query, args...)
		return nil
	}
	return later(t.Exec(query, args...))
}

// later is the error of a write that had to write one row.
func later(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.Join(ErrNotWritten, err)
	}
	return nil
}

// Finally sets what the writes that Later held count (pgsql.Pending's
// Finally), such as a counter to the highest number they took: held with
// them, or run now, and it must write one row.
func (t *Tx) Finally(query string, args ...any) error {
	if t.Holding() {
		t.b.Finally(query, args...)
		return nil
	}
	return later(t.Exec(query, args...))
}

// Holding reports whether Later holds its writes for now.
func (t *Tx) Holding() bool { return t.b.Holding() }

// Next is the number after the highest that query answers (one integer),
// for a row the transaction is about to write: asked of the database the
// first time, then counted on in memory by each call until another
// statement runs, which may have written such a row.
func (t *Tx) Next(query string, args ...any) (int64, error) {
	ns, err := t.NextRow(query, args...)
	if err != nil {
		return 0, err
	}
	return ns[0], nil
}

// NextRow is Next for a query that answers a row of such numbers, each
// counted on alike.
func (t *Tx) NextRow(query string, args ...any) ([]int64, error) {
	return t.b.Numbers(t.ctx, t.tx, query, args...)
}

// Context is the context of the caller whose transaction this is.
func (t *Tx) Context() context.Context { return t.ctx }

// Exec runs a statement.
func (t *Tx) Exec(query string, args ...any) (sql.Result, error) {
	if err := t.sync(); err != nil {
		return nil, err
	}
	return t.tx.ExecContext(t.ctx, query, args...)
}

// QueryRow runs a statement that returns at most one row.
func (t *Tx) QueryRow(query string, args ...any) Row {
	t.sync() // a failure fails the statement, on the transaction it aborted
	if w := t.lite(); w != nil {
		return w.QueryRow(t.ctx, query, args...) // compiled on its connection
	}
	return t.tx.QueryRowContext(t.ctx, query, args...)
}

// Query runs a statement that returns rows.
func (t *Tx) Query(query string, args ...any) (*sql.Rows, error) {
	if err := t.sync(); err != nil {
		return nil, err
	}
	return t.tx.QueryContext(t.ctx, query, args...)
}

// lite is the transaction on SQLite, nil on PostgreSQL.
func (t *Tx) lite() *stmts.WriteTx {
	w, _ := t.tx.(*stmts.WriteTx)
	return w
}

// ExecStmt runs a prepared statement of the writer in this transaction.
// SQLite's transaction runs it compiled on its connection, as every
// statement; pgx keeps it prepared on each connection.
func (t *Tx) ExecStmt(st *Stmt, args ...any) (sql.Result, error) {
	t.sync() // a failure fails the statement, on the transaction it aborted
	return t.tx.ExecContext(t.ctx, st.q, args...)
}

// QueryRowStmt runs a prepared statement of the writer that returns at
// most one row, in this transaction.
func (t *Tx) QueryRowStmt(st *Stmt, args ...any) Row { return t.QueryRow(st.q, args...) }

// LockKey takes the lock of key (a lab's id) until the transaction ends,
// on PostgreSQL, where writing transactions run side by side: the
// transactions that number a key's rows take it before they count. On
// SQLite, whose one writer runs one transaction at a time, there is
// nothing to take.
func (t *Tx) LockKey(key string) error {
	if t.lite() != nil {
		return nil
	}
	_, err := t.tx.ExecContext(t.ctx, sqlKeyLock, key)
	return err
}
