package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"idemlab/sim/logtest"
)

// A flag out of its range is refused at start, with the range in the
// message, before anything starts or is logged: never silently replaced by
// a default, never after "listening".
func TestFlagsOutOfRangeAreRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want []string // in the error
	}{
		{[]string{"-max-labs", "0"}, []string{"-max-labs 0", "2 to 1000000"}},
		{[]string{"-max-labs", "-5"}, []string{"-max-labs -5", "2 to 1000000"}},
		{[]string{"-max-labs", "1000001"}, []string{"-max-labs 1000001", "2 to 1000000"}},
		{[]string{"-max-inflight", "0"}, []string{"-max-inflight 0", "64 to 10000"}},
		{[]string{"-max-inflight", "-1"}, []string{"-max-inflight -1", "64 to 10000"}},
		{[]string{"-max-inflight", "63"}, []string{"-max-inflight 63", "64 to 10000"}},
		{[]string{"-max-streams", "0"}, []string{"-max-streams 0", "1 to 100000"}},
		{[]string{"-max-streams", "-3"}, []string{"-max-streams -3", "1 to 100000"}},
		{[]string{"-lab-idle", "0"}, []string{"-lab-idle 0s", "1m to 8760h"}},
		{[]string{"-lab-idle", "-1h"}, []string{"-lab-idle -1h", "1m to 8760h"}},
		{[]string{"-lab-idle", "3s"}, []string{"-lab-idle 3s", "1m to 8760h"}},
		{[]string{"-smtp", "nohostport"}, []string{"-smtp nohostport", "host:port"}},
		{[]string{"-smtp", "mail.example:0"}, []string{"-smtp mail.example:0", "host:port"}},
		{[]string{"-smtp", ":1025"}, []string{"-smtp :1025", "host:port"}},
		{[]string{"-debug", "0.0.0.0:6060"}, []string{"-debug 0.0.0.0:6060", "loopback"}},
		{[]string{"-debug", "127.0.0.1"}, []string{"-debug 127.0.0.1", "loopback"}},
		{[]string{"-redis", "notaurl"}, []string{"-redis notaurl", "redis://"}},
		{[]string{"-redis", "redis://u:secret@host:bad"}, []string{"-redis redis://…@host:bad", "redis://"}},
		{[]string{"-addr", "nohostport"}, []string{"-addr nohostport", "host:port"}},
		{[]string{"-db", ""}, []string{"-db", "empty"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			// Should the flag be taken, the lab would serve until this ends.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			out, dir := &logtest.Buffer{}, t.TempDir()
			args := append([]string{"idemlab", "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "lab.db")}, tc.args...)
			err := run(ctx, args, func(string) string { return "" }, out)
			if err == nil {
				t.Fatalf("accepted; the lab logged:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows a password: %v", err)
			}
			if out.String() != "" {
				t.Errorf("the lab logged before it refused the flag:\n%s", out)
			}
			if made, _ := os.ReadDir(dir); len(made) > 0 {
				t.Errorf("the lab started before it refused the flag: it made %s", made[0].Name())
			}
		})
	}
}

// Every bad flag is named at once, and the usage says each range.
func TestFlagsRangesAreTold(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	out := &logtest.Buffer{}
	err := run(ctx, []string{"idemlab", "-addr", "127.0.0.1:0", "-db", ":memory:", "-max-labs", "0", "-max-streams", "0", "-smtp", "x"}, func(string) string { return "" }, out)
	if err == nil || !strings.Contains(err.Error(), "-max-labs") || !strings.Contains(err.Error(), "-max-streams") || !strings.Contains(err.Error(), "-smtp") {
		t.Errorf("three bad flags: %v, want each named", err)
	}
	out = &logtest.Buffer{}
	if err := run(context.Background(), []string{"idemlab", "-h"}, func(string) string { return "" }, out); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"1m to 8760h", "2 to 1000000", "64 to 10000", "1 to 100000"} {
		if !strings.Contains(out.String(), r) {
			t.Errorf("the usage does not say the range %s:\n%s", r, out)
		}
	}
}

// The values at the ends of each range are taken.
func TestFlagsAtTheirBoundsAreTaken(t *testing.T) {
	t.Parallel()
	base, stop := startLab(t, "-db", ":memory:", "-max-labs", "2", "-max-inflight", "64", "-max-streams", "1",
		"-lab-idle", "1m", "-smtp", "127.0.0.1:1")
	if code, _, body := call(t, "GET", base+"/healthz", ""); code != 200 {
		t.Errorf("healthz: %d %s", code, body)
	}
	if err := stop(); err != nil {
		t.Errorf("run: %v", err)
	}
}
