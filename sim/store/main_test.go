package store

import (
	"context"
	"testing"

	"idemlab/sim/waittest"
)

// TestMain runs the package's tests eight at a time: most of them wait.
func TestMain(m *testing.M) {
	waittest.Parallel(8)
	m.Run()
}

// openSteady is openMember with a lease that no stall of a busy machine
// outlasts, for the tests that never let it lapse.
func openSteady(t *testing.T, dsn string) *Store {
	t.Helper()
	s, err := OpenWith(context.Background(), dsn, Options{Lease: 20 * testLease})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
