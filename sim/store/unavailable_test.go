package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// A statement on a connection that closed under its transaction (the one
// before it met the break) is the database unavailable, not the lab's
// mistake: 503 with Retry-After, not 500. Seen in a restart of PostgreSQL
// under load, in the second job of a batch run with savepoints.
func TestClosedConnectionIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "closed.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	_, err = conn.ExecContext(ctx, "SAVEPOINT job")
	if err == nil {
		t.Fatal("a statement on a closed connection ran")
	}
	if wrapped := fmt.Errorf("store: savepoint: %w", err); !IsUnavailable(wrapped) {
		t.Errorf("IsUnavailable(%v) = false", wrapped)
	}
	if IsUnavailable(errors.New("store: a mistake of the lab's")) {
		t.Error("an error of the lab's own is unavailable")
	}
}
