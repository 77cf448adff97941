package keys

import (
	"testing"

	"idemlab/sim/waittest"
)

// TestMain runs the package's tests eight at a time: most of them wait.
func TestMain(m *testing.M) { waittest.Main(m, 8) }
