package stmts

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"sync"

	"idemlab/sim/store/pgsql"
)

// Raw runs the writer's statements on SQLite's driver connection itself,
// for the writing transaction that holds it (WriteTx): database/sql costs
// a statement in a transaction about twenty allocations and, for one that
// answers rows, a goroutine watching the transaction's context, more than
// SQLite takes to run it; the driver's own call costs a few. Each text is
// compiled once on the connection (MaxCached of them; past the bound, the
// caller runs it through database/sql on the connection).
//
// The connection is the writer's one, taken from the pool for the
// transaction (sql.Conn.Raw hands it over), so nobody else uses it while
// the transaction lasts; Raw is used by that transaction alone, on its
// goroutine, between its database/sql calls, which never overlap it.
type Raw struct {
	mu    sync.Mutex
	conn  any // the driver connection the statements were compiled on
	stmts map[string]driver.Stmt
	args  []driver.NamedValue // the arguments of the statement running, reused
}

// On points r at conn, the driver connection of the transaction about to
// run. Statements compiled on another connection (one the pool has since
// closed) are dropped.
func (r *Raw) On(conn any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if conn == r.conn {
		return
	}
	r.conn, r.stmts = conn, map[string]driver.Stmt{}
}

// Close closes the statements compiled, holding db's connection (the
// writer's, about to close) while it does: nobody else uses it meanwhile.
func (r *Raw) Close(db *sql.DB) {
	if r == nil {
		return
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		return
	}
	defer conn.Close()
	conn.Raw(func(dc any) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if dc == r.conn {
			for _, st := range r.stmts {
				st.Close()
			}
		}
		r.conn, r.stmts = nil, nil
		return nil
	})
}

// Len is how many statements r holds compiled.
func (r *Raw) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.stmts)
}

// stmt is q compiled on the connection, nil when it cannot be: the caller
// runs it through database/sql, which says its error if it has one.
func (r *Raw) stmt(ctx context.Context, q string) driver.Stmt {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if st := r.stmts[q]; st != nil || r.conn == nil || len(r.stmts) >= MaxCached {
		return st
	}
	c, ok := r.conn.(driver.ConnPrepareContext)
	if !ok {
		return nil
	}
	st, err := c.PrepareContext(ctx, pgsql.Plain(q))
	if err != nil {
		return nil
	}
	if _, ok := st.(driver.StmtQueryContext); !ok {
		st.Close()
		return nil
	}
	r.stmts[q] = st
	return st
}

// Exec runs q, which answers no rows; ok is false when it did not run (the
// caller runs it through database/sql).
func (r *Raw) Exec(ctx context.Context, q string, args []any) (res sql.Result, err error, ok bool) {
	st := r.stmt(ctx, q)
	ex, _ := st.(driver.StmtExecContext)
	if ex == nil {
		return nil, nil, false
	}
	nv, err := r.named(args)
	if err != nil {
		return nil, err, true
	}
	defer clear(nv)
	res, err = ex.ExecContext(ctx, nv)
	return res, err, true
}

// QueryRow runs q, which answers at most one row; nil when it did not run
// (the caller runs it through database/sql).
func (r *Raw) QueryRow(ctx context.Context, q string, args []any) *Row {
	st := r.stmt(ctx, q)
	if st == nil {
		return nil
	}
	nv, err := r.named(args)
	if err != nil {
		return &Row{err: err}
	}
	defer clear(nv)
	rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, nv)
	if err != nil {
		return &Row{err: err}
	}
	defer rows.Close()
	row := &Row{}
	row.vals = row.buf[:0]
	row.vals = append(row.vals, make([]driver.Value, len(rows.Columns()))...) // in buf when it fits
	switch err := rows.Next(row.vals); {
	case errors.Is(err, io.EOF):
		return &Row{err: sql.ErrNoRows}
	case err != nil:
		return &Row{err: err}
	}
	return row
}

// named is args as the driver takes them, converted as database/sql
// converts them for a driver that checks none itself (SQLite's), in r's
// buffer: the caller clears it once the statement has run.
func (r *Raw) named(args []any) ([]driver.NamedValue, error) {
	if cap(r.args) < len(args) {
		r.args = make([]driver.NamedValue, len(args))
	}
	nv := r.args[:len(args)]
	for i, a := range args {
		if !driver.IsValue(a) {
			v, err := driver.DefaultParameterConverter.ConvertValue(a)
			if err != nil {
				return nil, err
			}
			a = v
		}
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv, nil
}

// WriteTx is a writing transaction on SQLite: the writer's connection,
// taken from the pool for it, on which BEGIN IMMEDIATE went, its
// statements run through Raw, compiled on the driver's connection (those
// Raw cannot run go through database/sql on the connection). database/sql's
// own transaction is not used: it cost each transaction a goroutine and a
// context, and the compiling of its BEGIN and its COMMIT, and each
// statement in it about twenty allocations.
type WriteTx struct {
	conn *sql.Conn
	raw  *Raw
	done bool
}

// Begin takes db's connection (the writer's one) and begins a transaction
// on it, with raw pointed at its driver connection.
func Begin(ctx context.Context, db *sql.DB, raw *Raw) (*WriteTx, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var dc any
	conn.Raw(func(c any) error { dc = c; return nil })
	raw.On(dc)
	t := &WriteTx{conn: conn, raw: raw}
	if _, err := t.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		return nil, err
	}
	return t, nil
}

// ExecContext runs a statement that answers no rows.
func (t *WriteTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if res, err, ok := t.raw.Exec(ctx, q, args); ok {
		return res, err
	}
	return t.conn.ExecContext(ctx, q, args...)
}

// QueryContext runs a statement that answers rows, through database/sql.
func (t *WriteTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.conn.QueryContext(ctx, q, args...)
}

// QueryRowContext runs a statement that answers at most one row, through
// database/sql (QueryRow runs it compiled).
func (t *WriteTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return t.conn.QueryRowContext(ctx, q, args...)
}

// QueryRow runs a statement that answers at most one row.
func (t *WriteTx) QueryRow(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
	if r := t.raw.QueryRow(ctx, q, args); r != nil {
		return r
	}
	return t.conn.QueryRowContext(ctx, q, args...)
}

// Ints reads the one row of integers that q answers (pgsql.Ints).
func (t *WriteTx) Ints(ctx context.Context, q string, args ...any) ([]int64, error) {
	if r := t.raw.QueryRow(ctx, q, args); r != nil {
		return r.ints()
	}
	return pgsql.Ints(ctx, t.conn, q, args...)
}

// Commit commits the transaction and gives its connection back. A COMMIT
// that fails leaves SQLite's transaction open: it is rolled back.
func (t *WriteTx) Commit() error {
	if t.done {
		return sql.ErrTxDone
	}
	_, err := t.ExecContext(context.Background(), "COMMIT")
	if err != nil {
		t.ExecContext(context.Background(), "ROLLBACK")
	}
	t.end()
	return err
}

// Rollback rolls the transaction back and gives its connection back; once
// it has ended, it does nothing (sql.ErrTxDone).
func (t *WriteTx) Rollback() error {
	if t.done {
		return sql.ErrTxDone
	}
	_, err := t.ExecContext(context.Background(), "ROLLBACK")
	t.end()
	return err
}

func (t *WriteTx) end() {
	t.done = true
	t.conn.Close()
}
