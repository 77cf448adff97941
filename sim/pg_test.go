package sim

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		`SELECT 1`:                                  `SELECT 1`,
		`SELECT a FROM t WHERE x = ? AND y = ?`:     `SELECT a FROM t WHERE x = $1 AND y = $2`,
		`INSERT INTO t VALUES (?1, ?2, ?1)`:         `INSERT INTO t VALUES ($1, $2, $1)`,
		`SELECT '?' FROM t WHERE x = ? AND y = '?'`: `SELECT '?' FROM t WHERE x = $1 AND y = '?'`,
		`SELECT ?12, ?3`:                            `SELECT $12, $3`,
	} {
		if got := rebind(in); got != want {
			t.Errorf("rebind(%q) = %q, want %q", in, got, want)
		}
	}
}

// A second lab process on the same PostgreSQL database is refused, naming
// why, until the first closes.
func TestOneProcessPerDatabase(t *testing.T) {
	dsn := os.Getenv("IDEMLAB_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("IDEMLAB_TEST_POSTGRES is not set: CI must start a PostgreSQL (.ci/run)")
		}
		t.Skip("no PostgreSQL: set IDEMLAB_TEST_POSTGRES=postgres://user@127.0.0.1:PORT/db")
	}
	ctx := context.Background()
	a, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := Open(ctx, dsn); err == nil || !strings.Contains(err.Error(), "another lab process") {
		if b != nil {
			b.Close()
		}
		t.Fatalf("a second process opened the database: %v", err)
	}
	a.Close()
	b, err := Open(ctx, dsn)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	b.Close()
}
