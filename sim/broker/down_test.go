package broker_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"idemlab/sim/broker"
	"idemlab/sim/logtest"
)

// A -nats that does not answer at start does not stop the lab: Start
// returns, the log names the flag once, a publish meanwhile fails at once
// as ErrDown (the outbox keeps the message), and the broker is used as
// soon as the server comes up, without a restart: one more line says so.
func TestStartsWithNATSDown(t *testing.T) {
	srv := newNATSServer(t)
	t.Parallel()
	var log logtest.Buffer
	b, err := broker.Start(context.Background(), broker.Config{URL: srv.url, Logger: log.Logger()})
	if err != nil {
		t.Fatalf("Start with the server down: %v", err)
	}
	t.Cleanup(b.Close)
	if b.Healthy() {
		t.Error("healthy with the server down")
	}
	for range 3 {
		start := time.Now()
		_, _, err := b.Publish(context.Background(), "demo", []byte("x"), "")
		if !errors.Is(err, broker.ErrDown) || time.Since(start) > time.Second {
			t.Errorf("publish with the server down: %v after %v; want ErrDown at once", err, time.Since(start))
		}
	}
	srv.start(t)
	eventually(t, "healthy", b.Healthy)
	in := newInbox()
	mustConsume(t, b, "demo", 5*time.Second, in.acking(t))
	seq := mustPublish(t, b, "demo", "after", "")
	if m := in.next(t); m.Seq != seq {
		t.Errorf("delivered seq %d; want %d", m.Seq, seq)
	}
	lines := log.Lines()
	if len(lines) != 2 || !strings.Contains(lines[0], "broker does not answer") || !strings.Contains(lines[0], "-nats") ||
		!strings.Contains(lines[1], "broker answers again") {
		t.Errorf("the log:\n%s\nwant one line naming -nats, one when it is back", log.String())
	}
}

// The embedded broker's store is its owner's only, even in a directory
// that existed with wider permissions.
func TestStoreDirIsOwnerOnly(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "jetstream")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := mustStart(t, broker.Config{StoreDir: dir})
	mustPublish(t, b, "demo", "x", "")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		i, err := d.Info()
		if err != nil {
			return err
		}
		if i.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %v; want no access for others", p, i.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
