package keys

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// go-redis says nothing of its own (its logger is the package's, writing
// to stderr): a store that does not answer is told once, by the lab's log.
// The client runs in a process of its own, so that its stderr is its own.
func TestGoRedisSaysNothing(t *testing.T) {
	if os.Getenv("KEYS_QUIET_CHILD") == "" {
		t.Parallel()
	}
	if os.Getenv("KEYS_QUIET_CHILD") != "" {
		s, err := Start(context.Background(), Config{URL: "redis://" + os.Getenv("KEYS_QUIET_CHILD") + "/0"})
		if err != nil {
			os.Exit(2)
		}
		for range 3 {
			s.Take(context.Background(), "lab", "k", "fp", time.Minute, time.Now())
			s.Healthy(context.Background())
		}
		s.Close()
		os.Exit(0)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing answers there now
	cmd := exec.Command(os.Args[0], "-test.run=^TestGoRedisSaysNothing$")
	cmd.Env = append(os.Environ(), "KEYS_QUIET_CHILD="+addr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "redis:") {
		t.Errorf("go-redis wrote:\n%s", out)
	}
}
