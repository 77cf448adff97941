package store

import (
	"context"
	"database/sql"
)

// Tx is a writing transaction as the function that runs in it receives it:
// its statements run in the transaction and under the context of the
// caller who asked for it. Commit and rollback are the writer's.
type Tx struct {
	ctx   context.Context
	tx    *sql.Tx
	lock  *sql.Stmt  // PostgreSQL's key lock, for LockKey
	stmts *stmtCache // SQLite: the writer's compiled statements
}

// Context is the context of the caller whose transaction this is.
func (t *Tx) Context() context.Context { return t.ctx }

// Exec runs a statement.
func (t *Tx) Exec(query string, args ...any) (sql.Result, error) {
	if st := t.stmts.cached(query); st != nil {
		return t.tx.StmtContext(t.ctx, st).ExecContext(t.ctx, args...)
	}
	return t.tx.ExecContext(t.ctx, query, args...)
}

// QueryRow runs a statement that returns at most one row.
func (t *Tx) QueryRow(query string, args ...any) *sql.Row {
	if st := t.stmts.cached(query); st != nil {
		return t.tx.StmtContext(t.ctx, st).QueryRowContext(t.ctx, args...)
	}
	return t.tx.QueryRowContext(t.ctx, query, args...)
}

// Query runs a statement that returns rows.
func (t *Tx) Query(query string, args ...any) (*sql.Rows, error) {
	if st := t.stmts.cached(query); st != nil {
		return t.tx.StmtContext(t.ctx, st).QueryContext(t.ctx, args...)
	}
	return t.tx.QueryContext(t.ctx, query, args...)
}

// Stmt is a prepared statement of the writer, in this transaction.
func (t *Tx) Stmt(st *Stmt) *sql.Stmt { return t.tx.StmtContext(t.ctx, st.st) }

// ExecStmt runs a prepared statement of the writer in this transaction.
func (t *Tx) ExecStmt(st *Stmt, args ...any) (sql.Result, error) {
	return t.Stmt(st).ExecContext(t.ctx, args...)
}

// QueryRowStmt runs a prepared statement of the writer that returns at
// most one row, in this transaction.
func (t *Tx) QueryRowStmt(st *Stmt, args ...any) *sql.Row {
	return t.Stmt(st).QueryRowContext(t.ctx, args...)
}

// LockKey takes the lock of key (a lab's id) until the transaction ends,
// on PostgreSQL, where writing transactions run side by side: the
// transactions that number a key's rows take it before they count. On
// SQLite, whose one writer runs one transaction at a time, there is
// nothing to take.
func (t *Tx) LockKey(key string) error {
	if t.lock == nil {
		return nil
	}
	_, err := t.Stmt(&Stmt{st: t.lock}).ExecContext(t.ctx, key)
	return err
}
