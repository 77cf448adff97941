package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/sim/pgtest"
)

// The writes a lab's batch holds (Later, Finally) and the numbers it counts
// (Next), on SQLite and on PostgreSQL: a batch without a conflict commits
// as it held them, numbered without a gap; one with a row that cannot be
// written runs again with each statement at once, and only the jobs whose
// rows were refused fail, with ErrNotWritten, the rest numbered without a
// gap still.
func TestHeldWritesGoWithTheBatch(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { heldWrites(t, openMember(t, filepath.Join(t.TempDir(), "held.db"), nil)) })
	t.Run("postgres", func(t *testing.T) { heldWrites(t, openSteady(t, pgtest.Database(t))) })
}

func heldWrites(t *testing.T, s *Store) {
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE held (lab TEXT, n BIGINT, k TEXT UNIQUE, PRIMARY KEY (lab, n))`,
		`CREATE TABLE held_counts (lab TEXT PRIMARY KEY, last BIGINT NOT NULL)`,
		`INSERT INTO held_counts VALUES ('a', 0)`,
		`INSERT INTO held VALUES ('b', 1, 'taken')`,
	} {
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	batch, check := heldBatch(t, s)

	keys := make([]string, 10)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	errs, held := batch(keys)
	if err := errors.Join(errs...); err != nil || held != int64(len(keys)) {
		t.Errorf("a batch without conflicts: %v, %d of %d jobs held their writes; want all committed, all held", err, held, len(keys))
	}
	check("after a batch without conflicts", 10)

	keys = []string{"m0", "taken", "m1", "dup", "m2", "dup", "k3", "m3"}
	errs, held = batch(keys)
	dups := 0
	for i, err := range errs {
		if keys[i] == "dup" { // the one queued second is refused
			if !errors.Is(err, ErrNotWritten) && err != nil {
				t.Errorf("job %d (key dup): %v; want committed or refused", i, err)
			}
			if err != nil {
				dups++
			}
			continue
		}
		refused := keys[i] == "taken" || keys[i] == "k3"
		if refused != errors.Is(err, ErrNotWritten) || (!refused && err != nil) {
			t.Errorf("job %d (key %s): %v; want refused %v", i, keys[i], err, refused)
		}
	}
	if dups != 1 {
		t.Errorf("%d of the two jobs of one key refused, want 1", dups)
	}
	if held != int64(len(keys)) {
		t.Errorf("%d of %d jobs tried holding first", held, len(keys))
	}
	check("after a batch with three rows refused", 15)
}

// heldBatch returns what TestHeldWritesGoWithTheBatch does: a batch of
// jobs, one a key, each numbering its row, which reports each job's
// result and how many held their writes; and the check of the rows.
func heldBatch(t *testing.T, s *Store) (batch func([]string) ([]error, int64), check func(when string, want int)) {
	ctx := context.Background()
	write := func(key string, held *atomic.Int64) error {
		return s.WriteLab(ctx, "lab-a", func(tx *Tx) error {
			if tx.Holding() {
				held.Add(1)
			}
			n, err := tx.Next(`SELECT COALESCE(MAX(n), 0) FROM held WHERE lab = ?1`, "a")
			if err != nil {
				return err
			}
			if err := tx.Later(`INSERT INTO held (lab, n, k) VALUES (?1, ?2, ?3) ON CONFLICT (k) DO NOTHING`, "a", n, key); err != nil {
				return err
			}
			return tx.Finally(`UPDATE held_counts SET last = CASE WHEN last < ?2 THEN ?2 ELSE last END WHERE lab = ?1`, "a", n)
		})
	}
	batch = func(keys []string) ([]error, int64) {
		release := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { // holds the writer so that the others queue into one batch
			s.WriteLab(ctx, "lab-a", func(*Tx) error { <-release; return nil })
		})
		waitLabQueued(t, s, "lab-a", 0)
		var held atomic.Int64
		errs := make([]error, len(keys))
		for i, k := range keys {
			wg.Go(func() { errs[i] = write(k, &held) })
		}
		waitLabQueued(t, s, "lab-a", len(keys))
		close(release)
		wg.Wait()
		return errs, held.Load()
	}
	check = func(when string, want int) {
		t.Helper()
		var rows, highest, last int
		err := s.r.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(n), 0), (SELECT last FROM held_counts WHERE lab = 'a') FROM held WHERE lab = 'a'`).Scan(&rows, &highest, &last)
		if err != nil || rows != want || highest != want || last != want {
			t.Errorf("%s: %d rows numbered up to %d, counter %d (%v); want %d of each", when, rows, highest, last, err, want)
		}
	}
	return batch, check
}

// On SQLite, a transaction alone in its batch writes at once (nothing to
// share a statement with), and a row not written is the caller's error
// there and then (a batch of many holds them: TestHeldWritesGoWithTheBatch).
func TestLaterAloneOnSQLiteWritesAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openMemory(t)
	if _, err := s.Exec(ctx, `CREATE TABLE held (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	for i, want := range []error{nil, ErrNotWritten} {
		err := s.Write(ctx, func(tx *Tx) error {
			if tx.Holding() {
				t.Error("a transaction alone on SQLite holds its writes")
			}
			return tx.Later(`INSERT INTO held (k) VALUES (?1) ON CONFLICT DO NOTHING`, "k")
		})
		if !errors.Is(err, want) || (want == nil && err != nil) {
			t.Errorf("write %d: %v, want %v", i, err, want)
		}
	}
}

// A lab writer's batch asks for every numbering the batches asked before
// in one statement, with its own arguments, when it first asks for one:
// the numbers are those asked one at a time would be, and a numbering
// that answers no row with them (its row gone) does not fail the others.
func TestNumbersAskedTogether(t *testing.T) {
	t.Parallel()
	s := openSteady(t, pgtest.Database(t))
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE nums (lab TEXT PRIMARY KEY, a BIGINT NOT NULL, b BIGINT NOT NULL)`,
		`INSERT INTO nums VALUES ('x', 10, 100), ('y', 20, 200)`,
		`CREATE SEQUENCE asks_of_a`, // counts the times a is asked
	} {
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	const (
		qa = `SELECT a + 0 * nextval('asks_of_a') FROM nums WHERE lab = ?1`
		qb = `SELECT b, a + b FROM nums WHERE lab = ?1`
	)
	ask := func(lab string, bOnly bool) (got []int64, err error) {
		err = s.WriteLab(ctx, "lab-n", func(tx *Tx) error {
			got = nil
			if !bOnly {
				a, err := tx.Next(qa, lab)
				if err != nil {
					return err
				}
				got = append(got, a)
			}
			ns, err := tx.NextRow(qb, lab)
			got = append(got, ns...)
			return err
		})
		return got, err
	}
	for i, c := range []struct {
		lab   string
		bOnly bool
		want  []int64
	}{
		{"x", false, []int64{11, 101, 111}}, // each asked alone, and remembered
		{"x", true, []int64{101, 111}},      // b first: a asked with it
		{"y", false, []int64{21, 201, 221}}, // another lab's: both at once, with its id
		{"x", false, []int64{11, 101, 111}},
	} {
		got, err := ask(c.lab, c.bOnly)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ask %d (%s): %v, %v; want %v", i, c.lab, got, err, c.want)
		}
		if i == 1 { // the batch asked for b alone: a went with it
			var asks int
			if err := s.r.QueryRowContext(ctx, `SELECT last_value FROM asks_of_a`).Scan(&asks); err != nil || asks != 2 {
				t.Errorf("a asked %d times after a batch that asked for b alone (%v); want 2: asked with b", asks, err)
			}
		}
	}
	if _, err := s.Exec(ctx, `DELETE FROM nums WHERE lab = 'y'`); err != nil {
		t.Fatal(err)
	}
	if got, err := ask("x", false); err != nil || !slices.Equal(got, []int64{11, 101, 111}) {
		t.Errorf("with a remembered numbering's row gone: %v, %v; want [11 101 111]", got, err)
	}
	if _, err := ask("y", true); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("the numbering whose row is gone: %v, want no rows", err)
	}
}

// A lab's next batch begins while one runs: its first statement waits in
// the database for the lab's lock, and once it has it reads the numbers
// the batch counts on (lab_turn), as the batch before left them, without
// asking again.
func TestNextBatchBeginsWhileOneRuns(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	s := openSteady(t, dsn)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE nums (lab TEXT PRIMARY KEY, a BIGINT NOT NULL)`,
		`INSERT INTO nums VALUES ('lab-t', 10)`,
		`CREATE SEQUENCE asks_of_a`, // counts the times a is read
	} {
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	const qa = `SELECT a + 0 * nextval('asks_of_a') FROM nums WHERE lab = ?1`
	asks := func() (n int) {
		if err := s.r.QueryRowContext(ctx, `SELECT last_value FROM asks_of_a`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	next := func(tx *Tx) (int64, error) { return tx.Next(qa, "lab-t") }
	if n, err := doNext(s, next, nil); err != nil || n != 11 || asks() != 1 {
		t.Fatalf("the first batch: %d, %v, read %d times; want 11, read once", n, err, asks())
	}

	// A batch that holds the lab, and moves a on before it commits.
	release, running := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		_, err := doNext(s, next, func(tx *Tx) error {
			close(running)
			<-release
			_, err := tx.Exec(`UPDATE nums SET a = 50 WHERE lab = 'lab-t'`)
			return err
		})
		first <- err
	}()
	<-running
	second := make(chan int64, 1)
	go func() {
		n, err := doNext(s, next, nil)
		if err != nil {
			t.Error(err)
		}
		second <- n
	}()
	db := admin(t, dsn)
	eventually(t, 5*time.Second, "the next batch waiting for the lab's lock", func() bool {
		var n int
		db.QueryRow(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n)
		return n == 1
	})
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := <-second; n != 51 {
		t.Errorf("the next batch counted on %d; want 51: a as the batch before left it", n-1)
	}
	if got := asks(); got != 3 {
		t.Errorf("a read %d times; want 3: once by each batch's first statement", got)
	}
}

// doNext runs a lab batch that takes next's number, then runs then (nil:
// nothing).
func doNext(s *Store, next func(*Tx) (int64, error), then func(*Tx) error) (n int64, err error) {
	err = s.WriteLab(context.Background(), "lab-t", func(tx *Tx) error {
		if n, err = next(tx); err != nil || then == nil {
			return err
		}
		return then(tx)
	})
	return n, err
}
