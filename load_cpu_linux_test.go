package main

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCPUReadingsComeFromProc checks the readings the load benchmarks
// report from: the machine's line of /proc/stat, and a process's stat
// (its parent, found after its name).
func TestCPUReadingsComeFromProc(t *testing.T) {
	t.Parallel()
	total, idle, ok := machineTicks()
	if !ok {
		t.Skip("no /proc/stat here: the load benchmarks report no CPU figures")
	}
	if total == 0 || idle > total {
		t.Fatalf("/proc/stat read as %d ticks in all, %d idle", total, idle)
	}
	if got, want := parentOf(os.Getpid()), os.Getppid(); got != want {
		t.Fatalf("this process's parent read as %d, want %d", got, want)
	}
	if f := statFields(os.Getpid()); len(f) < 13 || len(f[0]) != 1 || !strings.Contains("RSDZTtWXxKPI", f[0]) {
		t.Fatalf("this process's stat after its name: %q, want its state first", f)
	}
	// This process's CPU time, as the kernel tells it to getrusage, once
	// there is enough of it that a tick (10 ms) is small beside it.
	var ru syscall.Rusage
	used := func() time.Duration {
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for x := 0; used() < 300*time.Millisecond; x++ {
		_ = bytes.Repeat([]byte{byte(x)}, 1<<16)
	}
	want := used()
	if got := time.Duration(processTicks(os.Getpid())) * time.Second / userHZ; got < want-50*time.Millisecond || got > want+50*time.Millisecond {
		t.Fatalf("this process's CPU time read as %v from its stat, %v from getrusage", got, want)
	}
	if serverProcesses(os.Getpid()) == nil && os.Getppid() > 1 {
		t.Fatal("the processes of this process's parent were not found")
	}
}
