package web_test

import (
	"testing"

	"go.uber.org/goleak"

	"idemlab/sim/waittest"
)

// TestMain runs the package's tests eight at a time, whatever the machine's
// cores: most of them wait (on a network delay, a lock timeout, a browser),
// and a machine of two would otherwise run them nearly one by one. A -parallel
// flag on the command line still wins.
func TestMain(m *testing.M) {
	waittest.Setup(8)
	// The browser is closed after the tests and before the leak check, so its
	// goroutines are gone when goleak looks.
	goleak.VerifyTestMain(closingBrowser{m})
}

// closingBrowser runs the tests, then closes the shared browser.
type closingBrowser struct{ m *testing.M }

func (c closingBrowser) Run() int {
	code := c.m.Run()
	closeBrowser()
	return code
}
