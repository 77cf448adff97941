package idempotency_test

import (
	"testing"

	"idemlab/sim/waittest"
)

func TestMain(m *testing.M) {
	waittest.NoExitWait()
	waittest.Parallel(8) // most of them wait on a database
	m.Run()
}
