package pgsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A writing transaction on PostgreSQL runs on a connection of the pool
// taken for it, on which BEGIN went (Tx), not on a *sql.Tx: its last
// statements (a batch's held writes, what it tells the other processes)
// go with its COMMIT in one round trip, in pgx's batch on the connection,
// which database/sql's transactions cannot send. Each of those statements
// fails unless it did all it was to do (held_written), so that the COMMIT
// behind it commits nothing then.

// Tx is a writing transaction on PostgreSQL.
type Tx struct {
	*sql.Conn
	done bool // committed, rolled back, or given up: the connection is back in the pool
}

// Begin takes a connection of db (a Connector's) and begins a transaction
// on it, at the isolation of opts (nil: PostgreSQL's default, read
// committed), with its first statements, first, in the same round trip,
// each one's row into its Into. When one of them fails, the transaction
// rolls back.
func Begin(ctx context.Context, db *sql.DB, opts *sql.TxOptions, first ...Statement) (*Tx, error) {
	q := "BEGIN"
	if opts != nil {
		switch opts.Isolation {
		case sql.LevelDefault, sql.LevelReadCommitted:
		case sql.LevelRepeatableRead:
			q = "BEGIN ISOLATION LEVEL REPEATABLE READ"
		case sql.LevelSerializable:
			q = "BEGIN ISOLATION LEVEL SERIALIZABLE"
		default:
			return nil, fmt.Errorf("store: isolation %v is not PostgreSQL's", opts.Isolation)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	t := &Tx{Conn: conn}
	failed, err := t.send(ctx, append([]Statement{{Query: q}}, first...))
	switch {
	case err == nil:
		return t, nil
	case failed > 0: // BEGIN went: the first statement failed
		return nil, errors.Join(err, t.Rollback())
	default:
		t.drop()
		return nil, err
	}
}

// errNotPgx is a connection of a pool that is not a Connector's.
var errNotPgx = errors.New("store: a PostgreSQL transaction on a connection that is not pgx's")

// Rollback rolls the transaction back and gives its connection back; once
// the transaction has ended, it does nothing (sql.ErrTxDone).
func (t *Tx) Rollback() error {
	if t.done {
		return sql.ErrTxDone
	}
	if _, err := t.Conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.drop()
		return err
	}
	t.done = true
	return t.Conn.Close()
}

// drop gives the connection up: the pool closes it, whatever state its
// session is in.
func (t *Tx) drop() {
	t.done = true
	t.Conn.Raw(func(any) error { return driver.ErrBadConn })
}

// Commit sends sts, then COMMIT, in one round trip, and gives the
// connection back. Its error is the first statement's that failed, with
// its place among sts (len(sts): the COMMIT's); a statement's failure
// rolls the transaction back, the COMMIT behind it never running.
func (t *Tx) Commit(ctx context.Context, sts []Statement) (failed int, err error) {
	if t.done {
		return len(sts), sql.ErrTxDone
	}
	failed, err = t.send(ctx, append(sts[:len(sts):len(sts)], Statement{Query: "COMMIT"}))
	switch {
	case err == nil:
		t.done = true
		return len(sts), t.Conn.Close()
	case failed < len(sts):
		return failed, errors.Join(err, t.Rollback()) // aborted: the COMMIT did not run
	default:
		t.drop() // the COMMIT failed: whether it committed is settle's to learn
		return failed, err
	}
}

// send sends sts on the connection in one round trip (pgx's batch) and
// reads their results in order, the row of each that has an Into into it.
// It returns the place of the first statement that failed
// (len(sts) when none did); those after it did not run.
func (t *Tx) send(ctx context.Context, sts []Statement) (failed int, err error) {
	failed = len(sts)
	err = t.Conn.Raw(func(dc any) error {
		c, ok := Pgx(dc)
		if !ok {
			failed = 0
			return errNotPgx
		}
		var b pgx.Batch
		for _, st := range sts {
			b.Queue(st.Query, st.Args...)
		}
		br := c.SendBatch(ctx, &b)
		for i, st := range sts {
			var err error
			if st.Into != nil {
				err = br.QueryRow().Scan(st.Into...)
			} else {
				_, err = br.Exec()
			}
			if err != nil {
				failed = i
				br.Close() // it says the same failure
				return err
			}
		}
		return br.Close()
	})
	return failed, err
}
