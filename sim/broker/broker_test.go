package broker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"idemlab/sim/broker"
	"idemlab/sim/waittest"
)

func TestMain(m *testing.M) {
	waittest.Setup(8)
	goleak.VerifyTestMain(m)
}

// wait bounds every wait for a delivery that should come; generous, for -race on two cores.
const wait = 10 * time.Second

// mustStart starts a broker on cfg and closes it when the test ends.
func mustStart(tb testing.TB, cfg broker.Config) *broker.Broker {
	tb.Helper()
	b, err := broker.Start(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(b.Close)
	return b
}

// mustPublish publishes data for the lab and returns its stream sequence.
func mustPublish(tb testing.TB, b *broker.Broker, lab, data, msgID string) uint64 {
	tb.Helper()
	seq, dup, err := b.Publish(context.Background(), lab, []byte(data), msgID)
	if err != nil {
		tb.Fatalf("Publish(%s, %q, %q): %v", lab, data, msgID, err)
	}
	if dup {
		tb.Fatalf("Publish(%s, %q, %q): duplicate", lab, data, msgID)
	}
	return seq
}

// mustConsume starts the lab's consumer.
func mustConsume(tb testing.TB, b *broker.Broker, lab string, ackWait time.Duration, h func(context.Context, *broker.Msg)) {
	tb.Helper()
	if err := b.Consume(lab, ackWait, h); err != nil {
		tb.Fatalf("Consume(%s, %v): %v", lab, ackWait, err)
	}
}

// An inbox collects the deliveries a handler sees.
type inbox chan *broker.Msg

func newInbox() inbox { return make(inbox, 1024) }

// acking is a handler that acks each delivery, then records it.
func (in inbox) acking(tb testing.TB) func(context.Context, *broker.Msg) {
	return func(ctx context.Context, m *broker.Msg) {
		if err := m.Ack(ctx); err != nil && ctx.Err() == nil {
			tb.Errorf("Ack seq %d: %v", m.Seq, err)
		}
		in <- m
	}
}

// holding is a handler that records each delivery and withholds the ack.
func (in inbox) holding(ctx context.Context, m *broker.Msg) {
	in <- m
}

// next returns the next delivery, failing the test when none comes within wait.
func (in inbox) next(tb testing.TB) *broker.Msg {
	tb.Helper()
	select {
	case m := <-in:
		return m
	case <-time.After(wait):
		tb.Fatalf("no delivery within %v", wait)
		return nil
	}
}

// quiet fails the test when a delivery comes within d.
func (in inbox) quiet(tb testing.TB, d time.Duration) {
	tb.Helper()
	select {
	case m := <-in:
		tb.Errorf("unexpected delivery: seq %d, delivered %d, %q", m.Seq, m.Delivered, m.Data)
	case <-time.After(d):
	}
}

func TestSubject(t *testing.T) {
	t.Parallel()
	if got, want := broker.Subject("demo"), "idemlab.demo.payments"; got != want {
		t.Errorf("Subject(demo) = %q, want %q", got, want)
	}
}

func TestInvalidLab(t *testing.T) {
	t.Parallel()
	b := mustStart(t, broker.Config{})
	for _, lab := range []string{"", "a.b", "*", ">", "a b", "lab/1", string(make([]byte, 65))} {
		if _, _, err := b.Publish(context.Background(), lab, nil, ""); err == nil {
			t.Errorf("Publish(%q): no error", lab)
		}
		if err := b.Consume(lab, time.Second, newInbox().holding); err == nil {
			t.Errorf("Consume(%q): no error", lab)
		}
		if err := b.Remove(context.Background(), lab); err == nil {
			t.Errorf("Remove(%q): no error", lab)
		}
	}
	if err := b.Consume("demo", 0, newInbox().holding); err == nil {
		t.Error("Consume with ackWait 0: no error")
	}
	if got := b.Consuming(); got != 0 {
		t.Errorf("Consuming() = %d, want 0", got)
	}
}

func TestStartFails(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]broker.Config{
		"not a URL":          {URL: "nats://[::1"}, // a server that is down is no failure: TestStartsWithNATSDown
		"window over maxAge": {Duplicates: time.Hour, MaxAge: time.Minute},
	} {
		if b, err := broker.Start(context.Background(), cfg); err == nil {
			b.Close()
			t.Errorf("%s: Start succeeded", name)
		}
	}
}

func TestHealthy(t *testing.T) {
	t.Parallel()
	b, err := broker.Start(context.Background(), broker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Healthy() {
		t.Error("Healthy() = false after Start")
	}
	b.Close()
	if b.Healthy() {
		t.Error("Healthy() = true after Close")
	}
	if _, _, err := b.Publish(context.Background(), "demo", nil, ""); !errors.Is(err, broker.ErrClosed) {
		t.Errorf("Publish after Close: %v, want ErrClosed", err)
	}
	if err := b.Consume("demo", time.Second, newInbox().holding); !errors.Is(err, broker.ErrClosed) {
		t.Errorf("Consume after Close: %v, want ErrClosed", err)
	}
}
