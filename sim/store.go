package sim

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed schema.sql
var schema string

// Store is the lab's SQLite database. Writes go through one connection, so
// writing transactions queue in Go instead of failing with SQLITE_BUSY; reads
// of a file database use a pool of their own and see committed data (WAL).
type Store struct {
	w  *sql.DB // the single writer
	r  *sql.DB // readers; the writer itself for :memory:
	q  queries
	tw *writer // runs the writing transactions, committing them in groups

	pool    *pgxpool.Pool // PostgreSQL's (pg.go): w and r are one pool over it
	ownerMu sync.Mutex    // one statement at a time on owner
	owner   *sql.Conn     // PostgreSQL: the session that holds the process's locks
	alone   bool          // no other process ran on the database at the start (always, on SQLite): what a last run left is this one's to mend
	leader  atomic.Bool   // PostgreSQL: this process holds the leader lock
	skew    atomic.Int64  // PostgreSQL: the database's clock minus ours, in ns
}

// Open opens (creating if needed) the database at path, or a private
// in-memory database for ":memory:", and applies the schema.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("store: empty database path")
	}
	if IsPostgres(path) {
		return openPostgres(ctx, path)
	}
	// journal_size_limit: after a checkpoint, the WAL file is cut back to
	// 4 MiB instead of keeping the size of its busiest moment.
	const pragmas = "_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=journal_size_limit(4194304)&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)"
	memory := path == ":memory:"
	name := "file:" + strings.NewReplacer("?", "%3f", "#", "%23").Replace(path)
	if memory {
		name = "file::memory:"
	}
	w, err := sql.Open("sqlite", name+"?"+pragmas+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{w: w, r: w, alone: true}
	if err := migrate(ctx, w, time.Now()); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: migrate %s: %w", path, err)
	}
	if !memory {
		r, err := sql.Open("sqlite", name+"?"+pragmas+"&_pragma=query_only(1)")
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("store: open readers %s: %w", path, err)
		}
		// Readers stay open: a connection closed when idle is opened,
		// set up and has its statements prepared again at the next burst.
		r.SetMaxOpenConns(4)
		r.SetMaxIdleConns(4)
		r.SetConnMaxLifetime(0)
		r.SetConnMaxIdleTime(0)
		s.r = r
	}
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return nil, err
	}
	s.tw = newWriter(w, &s.q)
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if s.tw != nil {
		s.tw.close()
	}
	if s.owner != nil {
		s.owner.Close() // the session ends, and its lock with it
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

// tx runs fn in a writing transaction and commits it when fn returns nil;
// when fn fails or panics, none of its writes remain, and when ctx ends
// before its turn, it does not run. fn must do all its work through tx: the
// writer's one connection is busy with it. It is the way to write; the one
// other, isolated (pg.go), is check-then-insert's on PostgreSQL.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	return s.tw.run(ctx, fn)
}

// exec runs one statement in a writing transaction of its own.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// isUniqueViolation reports whether err is SQLite's UNIQUE constraint error,
// the IntegrityError of the article's second listing.
func isUniqueViolation(err error) bool {
	if pgCode(err) == "23505" {
		return true
	}
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

// isGone reports whether err is SQLite's foreign key error: the row's lab
// was removed while the request that wrote it was running.
func isGone(err error) bool {
	if pgCode(err) == "23503" {
		return true
	}
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// Health checks that the ledger can be written: one small write through the
// writer, within ctx.
func (e *Engine) Health(ctx context.Context) error {
	_, err := e.store.exec(ctx, `INSERT INTO health (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at`, e.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("health: the ledger cannot be written: %w", err)
	}
	return nil
}
