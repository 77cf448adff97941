package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"idemlab/sim/pgtest"
)

// Transactions that share a group commit stay independent: a failing one
// leaves nothing behind, the others all commit, and a UNIQUE conflict between
// two of them is seen as between serial transactions.
// On PostgreSQL the batch is a lab's, and runs first without savepoints.
func TestGroupCommitKeepsTransactionsApart(t *testing.T) {
	t.Parallel()
	s := openMemory(t)
	keptApart(t, s, s.Write, func(n int) { waitQueued(t, s, n) })
}

func TestLabBatchKeepsTransactionsApart(t *testing.T) {
	t.Parallel()
	s := openSteady(t, pgtest.Database(t))
	write := func(ctx context.Context, fn func(*Tx) error) error { return s.WriteLab(ctx, "lab-a", fn) }
	keptApart(t, s, write, func(n int) { waitLabQueued(t, s, "lab-a", n) })
}

// keptApart is the test of group commits through write, whose writer
// waitQueued waits to be busy with n transactions queued.
func keptApart(t *testing.T, s *Store, write func(context.Context, func(*Tx) error) error, waitQueued func(n int)) {
	ctx := context.Background()
	insert := testTable(t, s)
	failure := errors.New("job failed after writing")
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // holds the writer so that the others queue into one batch
		write(ctx, func(tx *Tx) error { <-release; return insert(tx, "first", nil) })
	})
	waitQueued(0)
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() {
			errs[i] = write(ctx, func(tx *Tx) error {
				switch {
				case i%5 == 0:
					if err := insert(tx, "doomed", nil); err != nil {
						return err
					}
					return failure
				case i%5 == 1:
					return insert(tx, "same-key", "k") // four jobs, one key
				}
				return insert(tx, "ok", nil)
			})
		})
	}
	waitQueued(len(errs))
	close(release)
	wg.Wait()

	dupes := 0
	for i, err := range errs {
		switch {
		case i%5 == 0 && !errors.Is(err, failure):
			t.Errorf("job %d: %v, want its own failure", i, err)
		case i%5 == 1 && err != nil:
			if !IsUnique(err) {
				t.Errorf("job %d: %v, want nil or a UNIQUE violation", i, err)
			}
			dupes++
		case i%5 > 1 && err != nil:
			t.Errorf("job %d: %v, want committed", i, err)
		}
	}
	count := func(order string) (n int) {
		s.w.QueryRowContext(ctx, `SELECT COUNT(*) FROM jobs WHERE name = ?`, order).Scan(&n)
		return n
	}
	if got := count("doomed"); got != 0 {
		t.Errorf("%d rows of failed jobs remain, want 0", got)
	}
	if got := count("same-key"); got != 1 || dupes != 3 {
		t.Errorf("same key: %d rows and %d conflicts, want 1 and 3", got, dupes)
	}
	if got := count("ok") + count("first"); got != 13 {
		t.Errorf("%d committed rows, want 13", got)
	}
}

func TestWriterRefusesAfterClose(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.Write(context.Background(), func(*Tx) error { return nil }); !errors.Is(err, errClosed) {
		t.Errorf("tx after close: %v, want errClosed", err)
	}
}

// testTable makes a table of the writer's tests' own, with a UNIQUE column,
// and returns a function that inserts a row in it.
func testTable(t *testing.T, s *Store) func(tx *Tx, name string, unique any) error {
	t.Helper()
	if _, err := s.Exec(context.Background(), `CREATE TABLE jobs (name TEXT NOT NULL, k TEXT UNIQUE)`); err != nil {
		t.Fatal(err)
	}
	return func(tx *Tx, name string, unique any) error {
		_, err := tx.Exec(`INSERT INTO jobs (name, k) VALUES (?, ?)`, name, unique)
		return err
	}
}

// openMemory opens a store on an in-memory SQLite database, closed when
// the test ends.
func openMemory(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func countJobs(t *testing.T, s *Store) (n int) {
	t.Helper()
	if err := s.r.QueryRow(`SELECT COUNT(*) FROM jobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A transaction that panics rolls back with its batch, its caller gets a
// PanicError, and the writer goes on: later writes work (a panic used to
// leave the writer busy for ever).
func TestWriterSurvivesPanic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	insert := testTable(t, s)
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { s.Write(ctx, func(tx *Tx) error { <-release; return insert(tx, "before", nil) }) })
	waitQueued(t, s, 0)
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.Write(ctx, func(tx *Tx) error {
				if err := insert(tx, "batch", nil); err != nil {
					return err
				}
				if i == 1 {
					panic("boom")
				}
				return nil
			})
		})
	}
	waitQueued(t, s, len(errs))
	close(release)
	wg.Wait()
	var pe *PanicError
	if !errors.As(errs[1], &pe) || pe.Value != "boom" {
		t.Errorf("the panicking transaction got %v, want a PanicError", errs[1])
	}
	for _, i := range []int{0, 2} {
		if errs[i] == nil {
			t.Errorf("job %d of the panicked batch committed; the batch must roll back whole", i)
		}
	}
	if err := s.Write(ctx, func(tx *Tx) error { return insert(tx, "after", nil) }); err != nil {
		t.Fatalf("a write after the panic: %v", err)
	}
	if got := countJobs(t, s); got != 2 { // before, after
		t.Errorf("%d rows, want 2 (nothing of the panicked batch)", got)
	}
	// Alone in its batch, too.
	if err := s.Write(ctx, func(tx *Tx) error { insert(tx, "alone", nil); panic("again") }); !errors.As(err, &pe) {
		t.Errorf("a lone panic: %v, want a PanicError", err)
	}
	if err := s.Write(ctx, func(tx *Tx) error { return insert(tx, "after2", nil) }); err != nil {
		t.Fatalf("a write after the second panic: %v", err)
	}
	if got := countJobs(t, s); got != 3 {
		t.Errorf("%d rows, want 3", got)
	}
}

// A write whose context ends while it waits for the writer leaves the queue
// at once, without running, and the writer goes on with the others: on
// SQLite, and on PostgreSQL, where the write that waits first begins its
// batch's transaction meanwhile (it waits for the lab's lock).
func TestWriterHonoursContextWhileQueued(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		s := openMemory(t)
		writerHonoursContextWhileQueued(t, s, s.Write, func(n int) { waitQueued(t, s, n) })
	})
	t.Run("postgres", func(t *testing.T) {
		s := openSteady(t, pgtest.Database(t))
		write := func(ctx context.Context, fn func(*Tx) error) error { return s.WriteLab(ctx, "lab-1", fn) }
		writerHonoursContextWhileQueued(t, s, write, func(n int) { waitLabQueued(t, s, "lab-1", n) })
	})
}

func writerHonoursContextWhileQueued(t *testing.T, s *Store, write func(context.Context, func(*Tx) error) error, waitQueued func(int)) {
	ctx := context.Background()
	insert := testTable(t, s)
	release := make(chan struct{})
	held := make(chan error, 1)
	go func() { held <- write(ctx, func(tx *Tx) error { <-release; return insert(tx, "holder", nil) }) }()
	waitQueued(0)

	cctx, cancel := context.WithCancel(ctx)
	queued := make(chan error, 1)
	ran := false
	go func() {
		queued <- write(cctx, func(tx *Tx) error { ran = true; return insert(tx, "cancelled", nil) })
	}()
	waitQueued(1)
	cancel()
	select {
	case err := <-queued:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled write: %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		close(release)
		t.Fatal("a cancelled write still waits for the writer")
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := write(ctx, func(tx *Tx) error { return insert(tx, "next", nil) }); err != nil {
		t.Fatalf("a write after the cancelled one: %v", err)
	}
	if ran {
		t.Error("the cancelled write ran")
	}
	if got := countJobs(t, s); got != 2 {
		t.Errorf("%d rows, want 2", got)
	}
	// A context that has ended before the call runs nothing.
	if err := write(cctx, func(tx *Tx) error { return insert(tx, "late", nil) }); !errors.Is(err, context.Canceled) {
		t.Errorf("a write with an ended context: %v", err)
	}
}

// queued reports whether w is busy with n transactions queued.
func (w *writer) queued(n int) bool { return w.queue.Queued(n) }

// waitQueued waits until the writer is busy with a job and n more wait in
// its queue: the jobs of the test have taken their places.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	eventually(t, 5*time.Second, fmt.Sprintf("the writer busy with %d queued", n), func() bool { return s.tw.queued(n) })
}
