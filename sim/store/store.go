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
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"idemlab/sim/clock"
	"idemlab/sim/store/member"
	"idemlab/sim/store/pgsql"
	"idemlab/sim/store/stmts"
	"idemlab/sim/store/wal"
)

// Store is the lab's database.
type Store struct {
	w  *sql.DB   // the writer: one connection on SQLite, the pool on PostgreSQL
	r  *sql.DB   // readers; the writer itself for :memory:
	tw *writer   // runs the writing transactions, committing them in groups (SQLite)
	pg *pgWrites // PostgreSQL: its writing transactions, each lab's through a writer of its own

	ckdb  *sql.DB           // SQLite file: the checkpointer's connection, its own once it starts
	ckpt  *wal.Checkpointer // SQLite file: copies the log into the database beside the writer
	reads *stmts.Cache      // SQLite: the readers' compiled statements (nil on PostgreSQL)

	pool   *pgxpool.Pool  // PostgreSQL's: w and r are one pool over it
	mpool  *pgxpool.Pool  // PostgreSQL: the membership's own connections (its renewals, settling a COMMIT), never queued behind the work its lease licenses
	m      *member.Member // this process among those on the database
	mender mender         // mends the work of processes with no row (Mending)
	alone  bool           // no other process ran on the database at the start (always, on SQLite)
	skew   clock.Skew     // PostgreSQL: the database's clock against ours

	toldSeq atomic.Int64 // numbers the notices the writing transactions tell (Tx.Notify)
}

// Open opens (creating if needed) the database dsn names: a SQLite file, a
// private in-memory database for ":memory:", or a PostgreSQL database for
// a postgres:// URL; brings its schema up to date; and takes this
// process's lease, with the default Options.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return OpenWith(ctx, dsn, Options{})
}

// OpenWith is Open with the membership's options.
func OpenWith(ctx context.Context, dsn string, o Options) (*Store, error) {
	if dsn == "" {
		return nil, errors.New("store: empty database path")
	}
	var (
		s   *Store
		err error
		m   = member.New(o.Lease, o.Clock, o.Log)
	)
	if IsPostgres(dsn) {
		s, err = openPostgres(ctx, dsn, m)
	} else {
		s, err = openSQLite(ctx, dsn, m)
	}
	if err != nil {
		return nil, err
	}
	s.tw = &writer{db: s.w, announce: new(atomic.Pointer[announcer]), turn: make(chan struct{}, 1)}
	if s.pool == nil {
		s.reads, s.tw.raw = stmts.New(s.r), new(stmts.Raw)
		s.tw.asked = new(pgsql.Asked) // a batch asks for its numbers in one statement
		if s.ckdb != nil {
			s.ckpt = wal.Start(s.ckdb, s.tw.hold, walEvery, walPages)
			s.tw.wrote = s.ckpt.Wrote
		}
	} else { // PostgreSQL's writes go through s.pg; s.tw keeps what they tell (announce)
		s.pg = &pgWrites{s: s, labs: map[string]*labWriter{}}
	}
	if s.pool != nil {
		if s.alone, err = m.Start(ctx, s.mpool, s.MendDead); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close closes the database: this process leaves the membership (its
// lease and the work it leaves unfinished: MendDead), and writes queued
// still run first.
func (s *Store) Close() error {
	var err error
	if s.ckpt != nil {
		err = s.ckpt.Close()
	}
	if s.tw != nil {
		s.leave()
		s.tw.close()
		s.tw.raw.Close(s.w)
	}
	s.reads.Close()
	err = errors.Join(err, s.w.Close())
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	if s.pool != nil {
		s.pool.Close()
		s.mpool.Close()
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
		return spread(ctx, s.tw.announce, fn, s.pg.write)
	}
	return s.tw.run(ctx, fn)
}

// WriteLab is Write for a transaction that numbers the lab's rows (MAX(n)
// + 1) or must not interleave with another of the lab's: on PostgreSQL it
// takes the lab's lock first, so that the lab's writes run one at a time
// while other labs' run beside them. On SQLite it is Write.
func (s *Store) WriteLab(ctx context.Context, lab string, fn func(*Tx) error) error {
	if s.pool != nil {
		return spread(ctx, s.tw.announce, fn, func(ctx context.Context, fn func(*Tx) error) error { return s.pg.lab(ctx, lab, fn) })
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
	if st := s.reads.Get(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.r.QueryRowContext(ctx, query, args...)
}

// Query reads rows from what has committed.
func (s *Store) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := s.reads.Get(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.r.QueryContext(ctx, query, args...)
}

// Prepare checks a statement of the writer, for the transactions that run
// it often (Tx.ExecStmt, Tx.QueryRowStmt): a statement that does not
// compile fails here, when the lab starts. The transactions run it
// compiled (SQLite's on the writer's connection, stmts.Raw; pgx keeps it
// prepared on each connection).
func (s *Store) Prepare(ctx context.Context, query string) (*Stmt, error) {
	st, err := s.w.PrepareContext(ctx, plain(s, query))
	if err != nil {
		return nil, fmt.Errorf("store: prepare %q: %w", query, err)
	}
	st.Close()
	return &Stmt{q: query}, nil
}

// PrepareRead prepares a statement of the readers.
func (s *Store) PrepareRead(ctx context.Context, query string) (*Stmt, error) {
	st, err := s.r.PrepareContext(ctx, plain(s, query))
	if err != nil {
		return nil, fmt.Errorf("store: prepare %q: %w", query, err)
	}
	return &Stmt{st: st, q: query, read: true}, nil
}

// plain is query as s's SQLite binds it fastest (pgsql.Plain); as it is
// on PostgreSQL, whose driver rebinds it.
func plain(s *Store, query string) string {
	if s.pool != nil {
		return query
	}
	return pgsql.Plain(query)
}

// Stmt is a prepared statement.
type Stmt struct {
	st   *sql.Stmt // the readers' (PrepareRead)
	q    string    // its text, which a writing transaction runs
	read bool      // of the readers: it runs outside transactions
}

// QueryRow runs a statement of the readers.
func (st *Stmt) QueryRow(ctx context.Context, args ...any) *sql.Row {
	return st.st.QueryRowContext(ctx, args...)
}

// Postgres reports whether the database is PostgreSQL.
func (s *Store) Postgres() bool { return s.pool != nil }

// IndexedBy is the clause that has SQLite read a table through index, for
// a query whose partial index the planner, without statistics, would pass
// over for the primary key; "" on PostgreSQL, whose planner has them.
func IndexedBy(s *Store, index string) string {
	if s.Postgres() {
		return ""
	}
	return " INDEXED BY " + index
}

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

// DeleteChunks runs the statements in order, each deleting at most ?2 rows
// of lab ?1, until each deletes no more: in transactions of PurgeChunk rows
// at most in all, so that a small lab goes in one (and a big one never
// holds the writer long).
func (s *Store) DeleteChunks(ctx context.Context, lab string, statements ...string) error {
	_, err := deleteChunks(ctx, s, lab, PurgeChunk, statements)
	return err
}

// deleteChunks is DeleteChunks in transactions of chunk rows at most, and
// how many rows each deleted.
func deleteChunks(ctx context.Context, s *Store, lab string, chunk int64, statements []string) ([]int64, error) {
	var done []int64
	for i := 0; i < len(statements); {
		next, deleted := i, int64(0)
		err := s.Write(ctx, func(tx *Tx) error { // may run again: it starts from i each time
			next, deleted = i, 0
			for next < len(statements) && deleted < chunk {
				res, err := tx.Exec(statements[next], lab, chunk-deleted)
				if err != nil {
					return err
				}
				n, err := res.RowsAffected()
				if err != nil {
					return err
				}
				if n < chunk-deleted { // it deleted the lab's last such rows
					next++
				}
				deleted += n
			}
			return nil
		})
		if err != nil {
			return done, err
		}
		done, i = append(done, deleted), next
	}
	return done, nil
}
