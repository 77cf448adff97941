package store

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"idemlab/sim/store/schema"
)

// An in-memory database, copied from the process's migrated one, has the
// schema a migrated file has, its version, and nothing of another
// in-memory database's rows.
func TestMemoryDatabasesStartFromTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file, err := Open(ctx, filepath.Join(t.TempDir(), "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	a, b := openMemory(t), openMemory(t)
	shape := func(s *Store) (out []string) {
		rows, err := s.Query(ctx, `SELECT type || ' ' || name FROM sqlite_schema ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var v string
			rows.Scan(&v)
			out = append(out, v)
		}
		return out
	}
	if got, want := shape(a), shape(file); !slices.Equal(got, want) || len(want) < 10 {
		t.Errorf("in memory: %v\nin a file: %v", got, want)
	}
	var version int
	if err := b.QueryRow(ctx, `PRAGMA user_version`).Scan(&version); err != nil || version != schema.Numbered {
		t.Errorf("user_version %d (%v), want %d", version, err, schema.Numbered)
	}
	if _, err := a.Exec(ctx, `INSERT INTO health (id, at) VALUES (1, 1)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRow(ctx, `SELECT COUNT(*) FROM health`).Scan(&n); err != nil || n != 0 {
		t.Errorf("another in-memory database has %d rows of health (%v), want 0", n, err)
	}
}
