package broker_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"idemlab/sim/broker"
)

// TestNATSServer runs the behaviours against a nats-server binary, as CI's Debian one (2.9.10).
func TestNATSServer(t *testing.T) {
	srv := newNATSServer(t)
	t.Parallel()
	srv.start(t)
	b := mustStart(t, broker.Config{URL: srv.url})
	for _, bh := range behaviours {
		t.Run(bh.name, func(t *testing.T) {
			t.Parallel()
			bh.check(t, b, "external-"+bh.name)
		})
	}
}

func TestNATSServerRestart(t *testing.T) {
	srv := newNATSServer(t)
	t.Parallel()
	srv.start(t)
	b := mustStart(t, broker.Config{URL: srv.url})
	in := newInbox()
	mustConsume(t, b, "demo", 5*time.Second, in.acking(t))
	mustPublish(t, b, "demo", "before", "")
	in.next(t)

	srv.stop()
	eventually(t, "unhealthy", func() bool { return !b.Healthy() })
	srv.start(t)
	eventually(t, "healthy", b.Healthy)

	seq := mustPublish(t, b, "demo", "after", "")
	// At least once: a server stopped before it stored the ack of "before"
	// delivers it again; "after" must come all the same.
	for {
		m := in.next(t)
		if string(m.Data) == "before" {
			continue
		}
		if m.Seq != seq || string(m.Data) != "after" {
			t.Errorf("after restart: %q seq %d, want %q seq %d", m.Data, m.Seq, "after", seq)
		}
		break
	}
}

// TestNATSServerConsumerDeleted deletes a lab's consumer behind the broker's back: the broker makes
// it again, and the new durable delivers the stream's messages from the start.
func TestNATSServerConsumerDeleted(t *testing.T) {
	srv := newNATSServer(t)
	t.Parallel()
	srv.start(t)
	b := mustStart(t, broker.Config{URL: srv.url})
	in := newInbox()
	mustConsume(t, b, "demo", 5*time.Second, in.acking(t))
	seq := mustPublish(t, b, "demo", "first", "")
	in.next(t)

	nc, err := nats.Connect(srv.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stream, err := js.Stream(ctx, "IDEMLAB")
	if err != nil {
		t.Fatal(err)
	}
	deleted := 0
	consumers := stream.ListConsumers(ctx)
	for info := range consumers.Info() {
		if info.Config.FilterSubject == broker.Subject("demo") {
			if err := stream.DeleteConsumer(ctx, info.Name); err != nil {
				t.Fatal(err)
			}
			deleted++
		}
	}
	if err := consumers.Err(); err != nil {
		t.Fatal(err)
	}
	if deleted != 1 {
		t.Fatalf("deleted %d consumers for the lab, want 1", deleted)
	}

	if m := in.next(t); m.Seq != seq || m.Delivered != 1 {
		t.Errorf("from the new consumer: seq %d delivered %d, want seq %d delivered 1", m.Seq, m.Delivered, seq)
	}
}

// natsServer is a nats-server process with JetStream on a fixed loopback port and store, so that it
// can be restarted in place.
type natsServer struct {
	bin, dir, addr, url string
	cmd                 *exec.Cmd
}

// newNATSServer finds the nats-server binary, skipping the test when there is none, except on CI.
func newNATSServer(t *testing.T) *natsServer {
	t.Helper()
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("nats-server not on PATH")
		}
		t.Skip("nats-server not on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	srv := &natsServer{bin: bin, dir: t.TempDir(), addr: addr, url: "nats://" + addr}
	t.Cleanup(srv.stop)
	return srv
}

// start runs the server and waits for its port.
func (s *natsServer) start(t *testing.T) {
	t.Helper()
	_, port, _ := net.SplitHostPort(s.addr)
	s.cmd = exec.Command(s.bin, "-js", "-a", "127.0.0.1", "-p", port, "-sd", s.dir)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "nats-server listening on "+s.addr, func() bool {
		c, err := net.Dial("tcp", s.addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// stop kills the server, if it runs, and waits for it to exit.
func (s *natsServer) stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// eventually fails the test when cond does not hold within wait.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(wait); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %v", what, wait)
		}
	}
}
