// Package pgtest gives a test the real PostgreSQL that
// $IDEMLAB_TEST_POSTGRES names (.ci/run starts one), and a database of its
// own in it; or, for a test that stops or restarts PostgreSQL, a cluster of
// its own (Cluster).
package pgtest

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the driver of the admin connection
)

// Env names the PostgreSQL of the tests: postgres://user@127.0.0.1:PORT/db.
const Env = "IDEMLAB_TEST_POSTGRES"

// Server returns the address in $IDEMLAB_TEST_POSTGRES; without it the test
// skips, or fails under CI=true.
func Server(tb testing.TB) string {
	tb.Helper()
	dsn := os.Getenv(Env)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is not set: CI must start a PostgreSQL for this test (.ci/run)", Env)
		}
		tb.Skipf("no real PostgreSQL: set %s=postgres://user@127.0.0.1:PORT/db to run this test against one", Env)
	}
	return dsn
}

var made atomic.Int64

// Database creates a database of its own in the test's PostgreSQL, dropped
// when the test ends, and returns its address.
func Database(tb testing.TB) string {
	tb.Helper()
	base := Server(tb)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatal(err)
	}
	name := fmt.Sprintf("t_%d_%d_%d", time.Now().UnixNano(), os.Getpid(), made.Add(1))
	if _, err := admin.Exec(`CREATE DATABASE ` + name); err != nil {
		admin.Close()
		tb.Fatalf("create a database for the test: %v", err)
	}
	tb.Cleanup(func() {
		admin.Exec(`DROP DATABASE ` + name + ` WITH (FORCE)`)
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
