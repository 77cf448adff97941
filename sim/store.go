package sim

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"strings"

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
}

// Open opens (creating if needed) the database at path, or a private
// in-memory database for ":memory:", and applies the schema.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("store: empty database path")
	}
	const pragmas = "_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
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
	s := &Store{w: w, r: w}
	if _, err := w.ExecContext(ctx, schema); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: migrate %s: %w", path, err)
	}
	if !memory {
		r, err := sql.Open("sqlite", name+"?"+pragmas+"&_pragma=query_only(1)")
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("store: open readers %s: %w", path, err)
		}
		r.SetMaxOpenConns(4)
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
	err := s.w.Close()
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	return err
}

// tx runs fn in a writing transaction and commits it when fn returns nil;
// when fn fails, none of its writes remain. fn must do all its work through
// tx: the writer's one connection is busy with it.
func (s *Store) tx(_ context.Context, fn func(*sql.Tx) error) error {
	return s.tw.run(fn)
}

// isUniqueViolation reports whether err is SQLite's UNIQUE constraint error,
// the IntegrityError of the article's second listing.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

// Ping checks that the database answers.
func (e *Engine) Ping(ctx context.Context) error { return e.store.r.PingContext(ctx) }
