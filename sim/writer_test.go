package sim

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"
)

// Transactions that share a group commit stay independent: a failing one
// leaves nothing behind, the others all commit, and a UNIQUE conflict between
// two of them is seen as between serial transactions.
func TestGroupCommitKeepsTransactionsApart(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	insert := func(tx *sql.Tx, order string, dedup any) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO payments (lab_id, order_id, amount, dedup_key, created_at) VALUES ('t', ?, 1, ?, 'now')`, order, dedup)
		return err
	}
	failure := errors.New("job failed after writing")
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // holds the writer so that the others queue into one batch
		s.tx(ctx, func(tx *sql.Tx) error { <-release; return insert(tx, "first", nil) })
	})
	time.Sleep(20 * time.Millisecond)
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.tx(ctx, func(tx *sql.Tx) error {
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
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()

	dupes := 0
	for i, err := range errs {
		switch {
		case i%5 == 0 && !errors.Is(err, failure):
			t.Errorf("job %d: %v, want its own failure", i, err)
		case i%5 == 1 && err != nil:
			if !isUniqueViolation(err) {
				t.Errorf("job %d: %v, want nil or a UNIQUE violation", i, err)
			}
			dupes++
		case i%5 > 1 && err != nil:
			t.Errorf("job %d: %v, want committed", i, err)
		}
	}
	count := func(order string) (n int) {
		s.w.QueryRowContext(ctx, `SELECT COUNT(*) FROM payments WHERE order_id = ?`, order).Scan(&n)
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
	s, err := Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.tx(context.Background(), func(*sql.Tx) error { return nil }); !errors.Is(err, errClosed) {
		t.Errorf("tx after close: %v, want errClosed", err)
	}
}
