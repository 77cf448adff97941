package clock_test

import (
	"testing"

	"idemlab/sim/waittest"
)

func TestMain(m *testing.M) { waittest.Main(m, 0) }
