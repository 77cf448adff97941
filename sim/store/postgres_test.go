package store

import (
	"context"
	"testing"
	"time"

	"idemlab/sim/pgtest"
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

// Processes share one PostgreSQL database: the first to start is alone
// (it mends what the last run left), the others are not; one of them leads
// (publishes the outbox, expires), and when it goes another takes over.
func TestProcessesShareTheDatabase(t *testing.T) {
	dsn := pgtest.Database(t)
	ctx := context.Background()
	open := func() *Store {
		t.Helper()
		s, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Join(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := open()
	b := open()
	defer b.Close()
	if !a.Alone() || b.Alone() {
		t.Errorf("alone: first %v, second %v; want true, false", a.Alone(), b.Alone())
	}
	if !a.Lead(ctx) || b.Lead(ctx) {
		t.Fatalf("lead: first %v, second %v; want the first alone", a.Lead(ctx), b.Lead(ctx))
	}
	a.Close()
	// The server ends a closed session's backend, and its locks, a moment
	// after the client has gone: the lead passes within that moment.
	deadline := time.Now().Add(5 * time.Second)
	for !b.Lead(ctx) {
		if time.Now().After(deadline) {
			t.Fatal("the leader closed, and the other process did not take the lead")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := open()
	defer c.Close()
	if c.Alone() || c.Lead(ctx) {
		t.Errorf("a process joining a running one: alone %v, leads %v; want neither", c.Alone(), c.Lead(ctx))
	}
}
