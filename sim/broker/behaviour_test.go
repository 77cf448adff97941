package broker_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/sim/broker"
)

// behaviours are the checks run against the embedded server and against a real nats-server alike.
// Each uses its own lab, so they can share a broker.
var behaviours = []struct {
	name  string
	check func(t *testing.T, b *broker.Broker, lab string)
}{
	{"RoundTrip", checkRoundTrip},
	{"Redelivery", checkRedelivery},
	{"Dedup", checkDedup},
	{"NoMsgID", checkNoMsgID},
	{"ConsumeAgain", checkConsumeAgain},
	{"StopThenConsume", checkStopThenConsume},
}

func TestEmbedded(t *testing.T) {
	t.Parallel()
	b := mustStart(t, broker.Config{})
	for _, bh := range behaviours {
		t.Run(bh.name, func(t *testing.T) {
			t.Parallel()
			bh.check(t, b, "embedded-"+bh.name)
		})
	}
}

func checkRoundTrip(t *testing.T, b *broker.Broker, lab string) {
	in := newInbox()
	mustConsume(t, b, lab, 5*time.Second, in.acking(t))
	seq := mustPublish(t, b, lab, "charge 42", "key-1")

	m := in.next(t)
	if string(m.Data) != "charge 42" || m.Seq != seq || m.Delivered != 1 || m.MsgID != "key-1" {
		t.Errorf("got {%q seq %d delivered %d id %q}, want {%q seq %d delivered 1 id %q}",
			m.Data, m.Seq, m.Delivered, m.MsgID, "charge 42", seq, "key-1")
	}
	in.quiet(t, 100*time.Millisecond)
}

func checkRedelivery(t *testing.T, b *broker.Broker, lab string) {
	const ackWait = 200 * time.Millisecond
	in := newInbox()
	held := make(chan time.Time, 1)
	mustConsume(t, b, lab, ackWait, func(ctx context.Context, m *broker.Msg) {
		if m.Delivered == 1 {
			held <- time.Now()
			return // no ack: the broker must send it again
		}
		in.acking(t)(ctx, m)
	})
	seq := mustPublish(t, b, lab, "once", "")

	m := in.next(t)
	if m.Seq != seq || m.Delivered != 2 {
		t.Errorf("redelivery: seq %d delivered %d, want seq %d delivered 2", m.Seq, m.Delivered, seq)
	}
	if waited := time.Since(<-held); waited < ackWait-50*time.Millisecond {
		t.Errorf("redelivered after %v, before ackWait %v", waited, ackWait)
	}
	in.quiet(t, ackWait+100*time.Millisecond)
}

func checkDedup(t *testing.T, b *broker.Broker, lab string) {
	in := newInbox()
	mustConsume(t, b, lab, 5*time.Second, in.acking(t))
	seq := mustPublish(t, b, lab, "first", "charge-7")
	seq2, dup, err := b.Publish(context.Background(), lab, []byte("second"), "charge-7")
	if err != nil {
		t.Fatal(err)
	}
	if !dup || seq2 != seq {
		t.Errorf("second publish: seq %d duplicate %t, want seq %d duplicate true", seq2, dup, seq)
	}

	if m := in.next(t); string(m.Data) != "first" || m.Seq != seq {
		t.Errorf("got %q seq %d, want %q seq %d", m.Data, m.Seq, "first", seq)
	}
	in.quiet(t, 200*time.Millisecond)
}

func checkNoMsgID(t *testing.T, b *broker.Broker, lab string) {
	in := newInbox()
	mustConsume(t, b, lab, 5*time.Second, in.acking(t))
	var seqs [2]uint64
	for i := range seqs {
		seqs[i] = mustPublish(t, b, lab, "same", "")
	}
	if seqs[0] == seqs[1] {
		t.Fatalf("both publishes got seq %d", seqs[0])
	}
	for i := range seqs {
		if m := in.next(t); m.Seq != seqs[i] || m.MsgID != "" {
			t.Errorf("delivery %d: seq %d id %q, want seq %d id %q", i, m.Seq, m.MsgID, seqs[i], "")
		}
	}
	in.quiet(t, 100*time.Millisecond)
}

func checkConsumeAgain(t *testing.T, b *broker.Broker, lab string) {
	held := newInbox()
	mustConsume(t, b, lab, time.Hour, held.holding)
	seq := mustPublish(t, b, lab, "pending", "")
	if m := held.next(t); m.Delivered != 1 {
		t.Fatalf("first delivery: delivered %d", m.Delivered)
	}

	// The new ackWait applies to the message already out: it returns within it, not within the hour.
	in := newInbox()
	mustConsume(t, b, lab, 200*time.Millisecond, in.acking(t))
	if m := in.next(t); m.Seq != seq || m.Delivered != 2 {
		t.Errorf("after restart: seq %d delivered %d, want seq %d delivered 2", m.Seq, m.Delivered, seq)
	}
	if n := len(held); n != 0 {
		t.Errorf("the replaced handler got %d more deliveries", n)
	}
}

func checkStopThenConsume(t *testing.T, b *broker.Broker, lab string) {
	const ackWait = 200 * time.Millisecond
	var calls atomic.Int64
	held := newInbox()
	mustConsume(t, b, lab, ackWait, func(ctx context.Context, m *broker.Msg) {
		calls.Add(1)
		held.holding(ctx, m)
	})
	unacked := mustPublish(t, b, lab, "unacked", "")
	held.next(t)
	b.Stop(lab)
	stopped := calls.Load()

	fresh := mustPublish(t, b, lab, "sent while stopped", "")
	time.Sleep(ackWait + 100*time.Millisecond)
	if got := calls.Load(); got != stopped {
		t.Errorf("handler called %d times after Stop", got-stopped)
	}

	in := newInbox()
	mustConsume(t, b, lab, ackWait, in.acking(t))
	got := map[uint64]uint64{} // seq → delivered
	for range 2 {
		m := in.next(t)
		got[m.Seq] = m.Delivered
	}
	want := map[uint64]uint64{unacked: 2, fresh: 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after resume, seq→delivered = %v, want %v", got, want)
	}
	in.quiet(t, ackWait+100*time.Millisecond)
}

// ExampleBroker shows the life of one lab's messages.
func ExampleBroker() {
	ctx := context.Background()
	b, err := broker.Start(ctx, broker.Config{})
	if err != nil {
		panic(err)
	}
	defer b.Close()

	b.Publish(ctx, "demo", []byte("charge 42"), "key-1")
	_, dup, _ := b.Publish(ctx, "demo", []byte("charge 42"), "key-1")
	fmt.Println("duplicate:", dup)

	done := make(chan struct{})
	b.Consume("demo", 30*time.Second, func(ctx context.Context, m *broker.Msg) {
		fmt.Printf("%s (delivery %d)\n", m.Data, m.Delivered)
		m.Ack(ctx)
		close(done)
	})
	<-done
	// Output:
	// duplicate: true
	// charge 42 (delivery 1)
}
