// Package waittest is how the rooms' tests wait for another goroutine: a
// condition polled until it holds, never a fixed sleep.
package waittest

import (
	"flag"
	"strconv"
	"testing"
	"time"
)

// Within is how long For waits before it fails the test: far longer than
// any condition of a passing test takes, even under the race detector.
const Within = 30 * time.Second

// For polls cond every millisecond until it holds, and fails the test
// when it has not held within Within; what says what was awaited.
func For(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(Within)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("not within %v: %s", Within, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Setup readies a test binary in TestMain, before its tests run: it spares
// the race detector's wait at exit (NoExitWait, which must come first: it
// runs the binary again), then has the parallel tests run n at a time
// (Parallel) when n > 0.
func Setup(n int) {
	NoExitWait()
	if n > 0 {
		Parallel(n)
	}
}

// Main is a package's whole TestMain: Setup, then the tests.
func Main(m *testing.M, n int) {
	Setup(n)
	m.Run()
}

// Parallel has the package's parallel tests run n at a time, whatever the
// machine's cores, unless -test.parallel was given: most of them wait (on
// a database, a lease, a child process), and a machine of two cores would
// otherwise run them nearly one by one. TestMain calls it before m.Run.
func Parallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if f := flag.Lookup("test.parallel"); f != nil && !set {
		_ = f.Value.Set(strconv.Itoa(n))
	}
}
