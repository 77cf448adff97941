package wal_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"idemlab/sim/store/wal"
	"idemlab/sim/waittest"
)

const pragmas = "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"

// open opens one connection to the database at path.
func open(t *testing.T, path, more string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+pragmas+more)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// turn is a writer's turn, as the store's writer has one: a transaction
// runs holding it.
type turn struct {
	c     chan struct{}
	held  chan struct{} // a Hold began to wait for the turn
	holds int
}

func newTurn() *turn { return &turn{c: make(chan struct{}, 1), held: make(chan struct{}, 1)} }

func (tu *turn) hold(stop <-chan struct{}) (func(), bool) {
	tu.holds++
	select {
	case tu.held <- struct{}{}:
	default:
	}
	select {
	case tu.c <- struct{}{}:
		return func() { <-tu.c }, true
	case <-stop:
		return nil, false
	}
}

// commit commits a transaction of a row of about a page, holding the turn.
func commit(db *sql.DB, tu *turn) error {
	tu.c <- struct{}{}
	defer func() { <-tu.c }()
	_, err := db.Exec(`INSERT INTO note (body) VALUES (randomblob(3000))`)
	return err
}

// write commits n such transactions.
func write(t *testing.T, db *sql.DB, tu *turn, n int) {
	t.Helper()
	for range n {
		if err := commit(db, tu); err != nil {
			t.Fatal(err)
		}
	}
}

// beside opens a database whose writer (w) never checkpoints, and starts a
// Checkpointer beside it with every and bound; the caller closes it.
func beside(t *testing.T, every time.Duration, bound int) (path string, w *sql.DB, tu *turn, c *wal.Checkpointer) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "lab.db")
	w = open(t, path, "&_pragma=wal_autocheckpoint(0)")
	if _, err := w.Exec(`CREATE TABLE note (body BLOB)`); err != nil {
		t.Fatal(err)
	}
	tu = newTurn()
	return path, w, tu, wal.Start(open(t, path, ""), tu.hold, every, bound)
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// The writer's commits never copy the log (it only grows), and a round of
// the Checkpointer past the bound copies all of it with the writer's turn
// held, so that the writer's next transactions write the log from its
// beginning: the file stops growing.
func TestTheLogStartsAgainPastItsBound(t *testing.T) {
	t.Parallel()
	path, w, tu, c := beside(t, time.Hour, 64)
	defer c.Close()

	write(t, w, tu, 100)
	before := size(t, path)
	write(t, w, tu, 20)
	if grown := size(t, path); grown <= before {
		t.Fatalf("the log did not grow with 20 commits (%d → %d bytes): the writer checkpoints itself", before, grown)
	}
	log, copied, err := c.Round()
	if err != nil || log < 64 || copied != log {
		t.Fatalf("Round: log %d, copied %d, %v; want all of a log past 64 pages copied", log, copied, err)
	}
	if tu.holds != 1 {
		t.Fatalf("Round held the writer's turn %d times, want once", tu.holds)
	}
	full := size(t, path)
	write(t, w, tu, 20)
	if after := size(t, path); after != full {
		t.Errorf("after the round, 20 commits took the log from %d to %d bytes: it did not start again", full, after)
	}
	var n int
	if err := open(t, path, "").QueryRow(`SELECT count(*) FROM note`).Scan(&n); err != nil || n != 140 {
		t.Errorf("the database holds %d notes (%v), want 140", n, err)
	}
}

// Below the bound a round copies the log and leaves the writer alone.
func TestARoundBelowTheBoundHoldsNothing(t *testing.T) {
	t.Parallel()
	_, w, tu, c := beside(t, time.Hour, 1<<20)
	defer c.Close()
	write(t, w, tu, 10)
	log, copied, err := c.Round()
	if err != nil || log == 0 || copied != log || tu.holds != 0 {
		t.Errorf("Round: log %d, copied %d, %v, %d holds; want the log copied and no hold", log, copied, err, tu.holds)
	}
}

// A Checkpointer that waits for the writer's turn stops when closed.
func TestCloseEndsAWaitForTheTurn(t *testing.T) {
	t.Parallel()
	_, w, tu, c := beside(t, time.Millisecond, 8)
	write(t, w, tu, 20)
	tu.c <- struct{}{} // a transaction that does not end
	c.Wrote()
	<-tu.held
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	waittest.For(t, "Close to return", func() bool { return len(closed) == 1 })
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
}

// While the writer keeps committing, a round past the bound copies the log
// and the writer's next transactions write it from its beginning: the
// file stops growing though the commits go on.
func TestABusyWritersLogStartsAgain(t *testing.T) {
	t.Parallel()
	path, w, tu, c := beside(t, time.Hour, 64)
	defer c.Close()
	write(t, w, tu, 100)

	var commits atomic.Int64
	stop, failed := make(chan struct{}), make(chan error, 1)
	go func() {
		defer close(failed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := commit(w, tu); err != nil {
				failed <- err
				return
			}
			commits.Add(1)
		}
	}()
	waittest.For(t, "the writer to commit", func() bool { return commits.Load() > 10 })
	if _, _, err := c.Round(); err != nil {
		t.Fatal(err)
	}
	full, after := size(t, path), commits.Load()
	waittest.For(t, "20 commits after the round", func() bool { return commits.Load() >= after+20 })
	close(stop)
	if err := <-failed; err != nil {
		t.Fatal(err)
	}
	if grown := size(t, path); grown != full {
		t.Errorf("after the round, 20 commits took the log from %d to %d bytes: it did not start again", full, grown)
	}
}
