// Package store is the lab's database: SQLite (embedded, the default) or
// PostgreSQL (several processes on one ledger), behind one type. Writes go
// through one writer that commits them in groups, each in a Tx that the
// writing function receives; reads go to readers that see what has
// committed. The schema is numbered, embedded migrations per dialect,
// recorded in one version table; every time a row keeps is an integer
// (unix milliseconds).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is the lab's database.
type Store struct {
	w    *sql.DB    // the writer: one connection on SQLite, the pool on PostgreSQL
	r    *sql.DB    // readers; the writer itself for :memory:
	tw   *writer    // runs the writing transactions, committing them in groups (SQLite)
	labs labWriters // PostgreSQL: each lab's writer, while the lab is written to

	reads *stmtCache // SQLite: the readers' compiled statements (nil on PostgreSQL)

	lock *sql.Stmt // PostgreSQL: a key's (a lab's) advisory lock, for WriteLab and Tx.LockKey

	pool    *pgxpool.Pool // PostgreSQL's: w and r are one pool over it
	ownerMu sync.Mutex    // one statement at a time on owner
	owner   *sql.Conn     // PostgreSQL: the session that holds the process's locks
	alone   bool          // no other process ran on the database at the start (always, on SQLite)
	leader  atomic.Bool   // PostgreSQL: this process holds the leader lock
	skew    atomic.Int64  // PostgreSQL: the database's clock minus ours, in ns
}

// Open opens (creating if needed) the database dsn names: a SQLite file, a
// private in-memory database for ":memory:", or a PostgreSQL database for
// a postgres:// URL; and brings its schema up to date.
func Open(ctx context.Context, dsn string) (*Store, error) {
	if dsn == "" {
		return nil, errors.New("store: empty database path")
	}
	var (
		s   *Store
		err error
	)
	if IsPostgres(dsn) {
		s, err = openPostgres(ctx, dsn)
	} else {
		s, err = openSQLite(ctx, dsn)
	}
	if err != nil {
		return nil, err
	}
	s.tw, s.labs.m = &writer{db: s.w}, map[string]*labWriter{}
	if s.pool == nil {
		s.reads, s.tw.stmts = newStmtCache(s.r), newStmtCache(s.w)
	}
	if err := s.tw.prepare(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database; writes queued still run first.
func (s *Store) Close() error {
	if s.tw != nil {
		s.tw.close()
		s.tw.stmts.close()
	}
	s.reads.close()
	if s.owner != nil {
		s.owner.Close() // the session ends, and its locks with it
	}
	err := s.w.Close()
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	if s.pool != nil {
		s.pool.Close()
	}
	return err
}

// Write runs fn in a writing transaction and commits it when fn returns
// nil; when fn fails or panics, none of its writes remain, and when ctx
// ends before its turn, it does not run. fn works through the Tx it gets:
// on SQLite the one writer's connection is busy with it meanwhile (group
// commit); on PostgreSQL it runs beside the others, on a connection of its
// own (pgwrite.go).
func (s *Store) Write(ctx context.Context, fn func(*Tx) error) error {
	if s.pool != nil {
		return s.pgWrite(ctx, fn)
	}
	return s.tw.run(ctx, fn)
}

// WriteLab is Write for a transaction that numbers the lab's rows (MAX(n)
// + 1) or must not interleave with another of the lab's: on PostgreSQL it
// takes the lab's lock first, so that the lab's writes run one at a time
// while other labs' run beside them. On SQLite it is Write.
func (s *Store) WriteLab(ctx context.Context, lab string, fn func(*Tx) error) error {
	if s.pool != nil {
		return s.pgWriteLab(ctx, lab, fn)
	}
	return s.tw.run(ctx, fn)
}

// Exec runs one statement in a writing transaction of its own.
func (s *Store) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.Write(ctx, func(tx *Tx) error {
		var err error
		res, err = tx.Exec(query, args...)
		return err
	})
	return res, err
}

// QueryRow reads one row from what has committed.
func (s *Store) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := s.reads.get(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.r.QueryRowContext(ctx, query, args...)
}

// Query reads rows from what has committed.
func (s *Store) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := s.reads.get(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.r.QueryContext(ctx, query, args...)
}

// Prepare prepares a statement of the writer, for the transactions that
// run it often (Tx.Stmt): SQLite compiles each statement anew otherwise,
// and on the charge path compiling costs more than writing.
func (s *Store) Prepare(ctx context.Context, query string) (*Stmt, error) {
	st, err := s.w.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("store: prepare %q: %w", query, err)
	}
	return &Stmt{st: st}, nil
}

// PrepareRead prepares a statement of the readers.
func (s *Store) PrepareRead(ctx context.Context, query string) (*Stmt, error) {
	st, err := s.r.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("store: prepare %q: %w", query, err)
	}
	return &Stmt{st: st, read: true}, nil
}

// Stmt is a prepared statement.
type Stmt struct {
	st   *sql.Stmt
	read bool // of the readers: it runs outside transactions
}

// QueryRow runs a statement of the readers.
func (st *Stmt) QueryRow(ctx context.Context, args ...any) *sql.Row {
	return st.st.QueryRowContext(ctx, args...)
}

// Postgres reports whether the database is PostgreSQL.
func (s *Store) Postgres() bool { return s.pool != nil }

// Alone reports whether no other process was running on the database when
// this one started: what a last run left unfinished is this one's to mend.
// Always, on SQLite.
func (s *Store) Alone() bool { return s.alone }

// Health checks that the ledger can be written: one small write through
// the writer, within ctx.
func (s *Store) Health(ctx context.Context, now time.Time) error {
	_, err := s.Exec(ctx, `INSERT INTO health (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at`, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("health: the ledger cannot be written: %w", err)
	}
	return nil
}

// PurgeChunk is how many rows one transaction of a lab's removal deletes,
// so that removing a big lab never holds the writer long from the others.
const PurgeChunk = 500

// DeleteChunks runs each statement, which deletes at most ?2 rows of lab
// ?1, in transactions of its own until it deletes fewer than PurgeChunk.
func (s *Store) DeleteChunks(ctx context.Context, lab string, statements ...string) error {
	for _, q := range statements {
		for {
			res, err := s.Exec(ctx, q, lab, PurgeChunk)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n < PurgeChunk {
				break
			}
		}
	}
	return nil
}
