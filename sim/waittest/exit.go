package waittest

import (
	"os"
	"strings"
	"syscall"
)

// NoExitWait spares a test binary built with -race the second the race
// detector waits at its exit (GORACE's atexit_sleep_ms, 1000 by default),
// there to catch goroutines that race after the program's end: a second a
// package, most of the time of the small ones. It runs the binary again in
// place (the same process, arguments and output) with atexit_sleep_ms=0.
// Nothing a race shows is lost: testing fails the test a race happens in,
// and the run for a race after the last test ("race detected outside of
// test execution"); the detector's exit code still says any other. A GORACE
// that names atexit_sleep_ms is kept as it is. TestMain calls it first
// (Setup).
func NoExitWait() {
	gorace, _ := os.LookupEnv("GORACE")
	if !raceEnabled || strings.Contains(gorace, "atexit_sleep_ms") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	env := []string{"GORACE=" + strings.TrimSpace(gorace+" atexit_sleep_ms=0")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	_ = syscall.Exec(exe, os.Args, env) // returns only if it failed: then the wait stays
}
