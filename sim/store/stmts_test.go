package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"idemlab/sim/store/stmts"
)

// Statements run compiled once they have been met, reads and a
// transaction's writes alike, with the same results as before; a statement
// that does not compile still says its error every time; and the cache
// stops growing at its bound however many texts it meets.
func TestStatementsAreCompiledOnceAndBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Exec(ctx, `CREATE TABLE t (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	const insert = `INSERT INTO t (n) VALUES (?)`
	before := s.tw.raw.Len()
	for i := range 3 {
		if err := s.Write(ctx, func(tx *Tx) error { _, err := tx.Exec(insert, i); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.tw.raw.Len() - before; n != 1 {
		t.Errorf("the writer compiled %d statements on its connection in three transactions of one; want 1", n)
	}
	const sum = `SELECT COALESCE(SUM(n), 0), COUNT(*) FROM t`
	for range 2 {
		var total, count int
		if err := s.QueryRow(ctx, sum).Scan(&total, &count); err != nil || total != 3 || count != 3 {
			t.Fatalf("sum, count = %d, %d (%v); want 3, 3", total, count, err)
		}
	}
	if s.reads.Cached(sum) == nil {
		t.Errorf("the read is not compiled after it ran")
	}
	for range 2 {
		err := s.Write(ctx, func(tx *Tx) error { _, err := tx.Exec(`INSERT INTO nowhere VALUES (1)`); return err })
		if err == nil {
			t.Fatal("a statement on a missing table ran")
		}
		if _, err := s.Query(ctx, `SELECT nothing FROM nowhere`); err == nil {
			t.Fatal("a read of a missing table ran")
		}
	}
	for i := range 2 * stmts.MaxCached {
		var n int
		if err := s.QueryRow(ctx, fmt.Sprintf(`SELECT %d`, i)).Scan(&n); err != nil || n != i {
			t.Fatalf("SELECT %d = %d (%v)", i, n, err)
		}
	}
	if n := s.reads.Len(); n > stmts.MaxCached {
		t.Errorf("the readers' cache holds %d statements; its bound is %d", n, stmts.MaxCached)
	}
	err = s.Write(ctx, func(tx *Tx) error {
		for i := range 2 * stmts.MaxCached {
			if _, err := tx.Exec(fmt.Sprintf(`INSERT INTO t (n) VALUES (%d)`, i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var count int
	if err := s.QueryRow(ctx, `SELECT COUNT(*) FROM t`).Scan(&count); err != nil || count != 3+2*stmts.MaxCached {
		t.Fatalf("%d rows (%v) after %d writes of texts of their own; want %d", count, err, 2*stmts.MaxCached, 3+2*stmts.MaxCached)
	}
	if n := s.tw.raw.Len(); n > stmts.MaxCached {
		t.Errorf("the writer's connection holds %d statements compiled; its bound is %d", n, stmts.MaxCached)
	}
}
