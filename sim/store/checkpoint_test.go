package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"idemlab/sim/store"
	"idemlab/sim/waittest"
)

// The writer's commits leave the log to the store's checkpointer, which
// copies it into the database file soon after they end: a commit of a
// hundred pages, far fewer than SQLite's own checkpoint waits for, reaches
// the file while the store stays open.
func TestTheLogReachesTheDatabaseBesideTheWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idemlab.db")
	s, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	if _, err := s.Exec(ctx, `CREATE TABLE note (body BLOB)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(`INSERT INTO note (body) VALUES (randomblob(400000))`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, "the note's pages in the database file", func() bool { return size() >= before+400000 })
}
