package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"idemlab/sim/store/member"
	"idemlab/sim/store/pgsql"
	"idemlab/sim/store/schema"
)

// SQLite: one writer connection, so that writing transactions queue in Go
// instead of failing with SQLITE_BUSY; readers of a file database in a
// pool of their own, seeing what has committed (WAL).

// sqlitePragmas are set once per connection (modernc sorts them: a repeated
// pragma would not override). journal_size_limit: when the log starts
// again, the WAL file is cut back to the log's bound (walPages pages) if a
// checkpoint that could not keep up let it grow past it.
var sqlitePragmas = "_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=journal_size_limit(" + strconv.Itoa(walBytes) + ")&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)"

// The write-ahead log of a file database: its writer never checkpoints
// (wal_autocheckpoint 0); a wal.Checkpointer on a connection of its own
// copies the log at most every walEvery, and starts it again once it has
// walPages pages (about 32 MiB).
const (
	walPages = 8192
	walBytes = walPages*(4096+24) + 32 // walPages frames of a 4 KiB page, and the log's header
	walEvery = 20 * time.Millisecond
)

func openSQLite(ctx context.Context, path string, m *member.Member) (*Store, error) {
	memory := path == ":memory:"
	name := "file:" + strings.NewReplacer("?", "%3f", "#", "%23").Replace(path)
	if memory {
		name = "file::memory:"
	} else if err := ownerOnly(path); err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite", name+"?"+sqlitePragmas+"&_pragma=wal_autocheckpoint(0)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	keepOpen(w, 1)
	s := &Store{w: w, r: w, alone: true, m: m}
	migrate := schema.SQLite
	if memory {
		migrate = func(ctx context.Context, db *sql.DB) error { return schema.SQLiteMemory(ctx, db, freshMemory) }
	}
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: migrate %s: %w", path, err)
	}
	if err := s.member(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	if !memory {
		r, err := sql.Open("sqlite", name+"?"+sqlitePragmas+"&_pragma=query_only(1)")
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("store: open readers %s: %w", path, err)
		}
		keepOpen(r, 4)
		s.r = r
		if s.ckdb, err = sql.Open("sqlite", name+"?"+sqlitePragmas); err != nil {
			s.Close()
			return nil, fmt.Errorf("store: open the checkpointer's %s: %w", path, err)
		}
		keepOpen(s.ckdb, 1)
	}
	return s, nil
}

// member makes this process the only one on the SQLite database (one
// process runs on it): its row the only row, its lease without end, and
// the work of the last run its own to mend.
func (s *Store) member(ctx context.Context) error {
	_, err := s.w.ExecContext(ctx, `DELETE FROM processes`)
	if err == nil {
		_, err = s.w.ExecContext(ctx, `INSERT INTO processes (id, name, started_at, lease_until) VALUES (?, ?, ?, ?)`,
			s.m.ID(), s.m.Name(), time.Now().UnixMilli(), int64(math.MaxInt64))
	}
	return err
}

// freshMemory opens an empty in-memory database of one connection.
func freshMemory() (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file::memory:?"+sqlitePragmas)
	if err == nil {
		keepOpen(db, 1)
	}
	return db, err
}

// keepOpen keeps n connections open for good: a connection closed when
// idle is opened, set up and has its statements prepared again at the
// next burst.
func keepOpen(db *sql.DB, n int) {
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

// ownerOnly makes the database file readable by its owner only (0600)
// before SQLite opens it: the ledger holds every private lab's id. A new
// file is created so, and SQLite gives its WAL and shared memory the file's
// mode; a file found from an earlier run (its WAL and shared memory too,
// left by a run that did not close) is narrowed when it is ours, for a
// release or a umask of before made it wider. A file of another owner is
// left as it is: it is theirs.
func ownerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: create %s: %w", filepath.Base(path), err)
	}
	f.Close()
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		if err := narrow(name); err != nil {
			return fmt.Errorf("store: make %s owner-only: %w", filepath.Base(name), err)
		}
	}
	return nil
}

// narrow takes the group's and others' permissions off a file, if it is
// there and ours to change.
func narrow(name string) error {
	fi, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(name, fi.Mode().Perm()&^0o077); err != nil && !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return nil
}

// sqliteCode is the extended result code of a SQLite error, or 0.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

// IsUnique reports whether err is a UNIQUE (or primary key) constraint's
// error: the IntegrityError of the article's second listing.
func IsUnique(err error) bool {
	if pgsql.Code(err) == "23505" {
		return true
	}
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// IsGone reports whether err is a foreign key's error: the row's lab was
// removed while the request that wrote it was running.
func IsGone(err error) bool {
	return pgsql.Code(err) == "23503" || sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// IsSerialization reports whether err is PostgreSQL's serialization
// failure (40001): the transaction lost a race the database caught.
func IsSerialization(err error) bool { return pgsql.Code(err) == "40001" }
