package store_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"idemlab/sim/store"
)

// The ledger's files hold every private lab's id: the database and its
// WAL and shared-memory files are readable by their owner only (0600),
// whether the store makes them or finds them from an earlier run, made
// wider by a release or a umask of before.
func TestDatabaseFilesAreOwnerOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	files := func(path string) []string { return []string{path, path + "-wal", path + "-shm"} }
	check := func(t *testing.T, path string) {
		t.Helper()
		s, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Exec(ctx, `CREATE TABLE IF NOT EXISTS note (n INTEGER)`); err != nil { // the WAL has work
			t.Fatal(err)
		}
		for _, f := range files(path) {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatalf("%s: %v", filepath.Base(f), err)
			}
			if got := fi.Mode().Perm(); got != 0o600 {
				t.Errorf("%s is %v, want -rw-------", filepath.Base(f), got)
			}
		}
	}
	t.Run("new", func(t *testing.T) {
		check(t, filepath.Join(t.TempDir(), "idemlab.db"))
	})
	t.Run("found", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "idemlab.db")
		s, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		// As an earlier run left them: the database readable by all, and
		// the WAL and shared memory of a run that did not close.
		for _, f := range files(path)[1:] {
			if err := os.WriteFile(f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range files(path) {
			if err := os.Chmod(f, 0o644); err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(f); fi.Mode().Perm()&0o044 == 0 {
				t.Fatalf("%s: the test could not make it readable by others (%v)", f, fs.FileMode(0o644))
			}
		}
		check(t, path)
	})
}
