package store

import (
	"context"
	"testing"
	"time"

	"idemlab/sim/clock"
	"idemlab/sim/waittest"
)

// TestMain runs the package's tests eight at a time: most of them wait.
func TestMain(m *testing.M) { waittest.Main(m, 8) }

// openSteady is openMember with a lease that no stall of a busy machine
// outlasts, for the tests that never let it lapse.
func openSteady(t *testing.T, dsn string) *Store {
	t.Helper()
	return openLeased(t, dsn, 20*testLease, nil)
}

// openLeased opens a store on dsn with lease, closed when the test ends.
func openLeased(t *testing.T, dsn string, lease time.Duration, c clock.Clock) *Store {
	t.Helper()
	s, err := OpenWith(context.Background(), dsn, Options{Lease: lease, Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
