package views_test

import (
	"testing"

	"idemlab/sim/waittest"
)

func TestMain(m *testing.M) {
	waittest.NoExitWait()
	m.Run()
}
