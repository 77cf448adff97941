package store

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"idemlab/sim/pgtest"
)

// A lab's removal deletes its rows table by table, in transactions of a
// chunk of rows at most in all: a small lab's rows go in one transaction,
// a big lab's in as many as its rows need, and no other lab's row goes.
func TestDeleteChunksSharesTransactions(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "purge.db") },
		"postgres": func(t *testing.T) string { return pgtest.Database(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := openSteady(t, dsn(t))
			ctx := context.Background()
			tables := []string{"purge_a", "purge_b", "purge_c"}
			stmts := make([]string, len(tables))
			for i, tb := range tables {
				if _, err := s.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (lab TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (lab, n))`, tb)); err != nil {
					t.Fatal(err)
				}
				stmts[i] = fmt.Sprintf(`DELETE FROM %[1]s WHERE (lab, n) IN (SELECT lab, n FROM %[1]s WHERE lab = ?1 LIMIT ?2)`, tb)
			}
			fill := func(lab string, rows ...int) {
				for i, k := range rows {
					for n := range k {
						if _, err := s.Exec(ctx, fmt.Sprintf(`INSERT INTO %s (lab, n) VALUES (?, ?)`, tables[i]), lab, n); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			count := func(lab string) (n int) {
				for _, tb := range tables {
					var k int
					if err := s.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s WHERE lab = ?`, tb), lab).Scan(&k); err != nil {
						t.Fatal(err)
					}
					n += k
				}
				return n
			}
			fill("small", 3, 0, 2)
			fill("big", 7, 4, 5)
			fill("other", 2, 2, 2)
			for _, tc := range []struct {
				lab  string
				want []int64
			}{
				{"small", []int64{5}},     // all three tables in one transaction
				{"big", []int64{6, 6, 4}}, // six rows a transaction, across tables
			} {
				got, err := deleteChunks(ctx, s, tc.lab, 6, stmts)
				if err != nil || !slices.Equal(got, tc.want) {
					t.Errorf("%s: transactions deleting %v, %v; want %v", tc.lab, got, err, tc.want)
				}
				if n := count(tc.lab); n != 0 {
					t.Errorf("%s: %d rows left", tc.lab, n)
				}
			}
			if n := count("other"); n != 6 {
				t.Errorf("the other lab has %d rows; want its 6", n)
			}
			if got, err := deleteChunks(ctx, s, "nobody", 6, stmts); err != nil || !slices.Equal(got, []int64{0}) {
				t.Errorf("a lab with no rows: transactions deleting %v, %v; want one deleting nothing", got, err)
			}
		})
	}
}
