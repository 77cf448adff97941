package broker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"idemlab/sim/broker"
)

func TestLabsIsolated(t *testing.T) {
	t.Parallel()
	b := mustStart(t, broker.Config{})
	labs := []string{"AAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBB-_"}
	inboxes := make(map[string]inbox)
	for _, lab := range labs {
		inboxes[lab] = newInbox()
		mustConsume(t, b, lab, 5*time.Second, inboxes[lab].acking(t))
	}
	if got := b.Consuming(); got != len(labs) {
		t.Errorf("Consuming() = %d, want %d", got, len(labs))
	}
	for _, lab := range labs {
		mustPublish(t, b, lab, "for "+lab, "same-key") // JetStream dedups per stream; the broker per lab
	}
	for _, lab := range labs {
		in := inboxes[lab]
		if m := in.next(t); string(m.Data) != "for "+lab || m.MsgID != "same-key" {
			t.Errorf("lab %s got %q id %q", lab, m.Data, m.MsgID)
		}
		in.quiet(t, 100*time.Millisecond)
	}
}

func TestConsuming(t *testing.T) {
	t.Parallel()
	b := mustStart(t, broker.Config{})
	steps := []struct {
		do   func() error
		want int
	}{
		{func() error { return b.Consume("a", time.Second, newInbox().holding) }, 1},
		{func() error { return b.Consume("b", time.Second, newInbox().holding) }, 2},
		{func() error { return b.Consume("a", 2*time.Second, newInbox().holding) }, 2},
		{func() error { b.Stop("a"); return nil }, 1},
		{func() error { b.Stop("a"); return nil }, 1},
		{func() error { b.Stop("never"); return nil }, 1},
		{func() error { return b.Remove(context.Background(), "b") }, 0},
	}
	for i, step := range steps {
		if err := step.do(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := b.Consuming(); got != step.want {
			t.Errorf("step %d: Consuming() = %d, want %d", i, got, step.want)
		}
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	b := mustStart(t, broker.Config{})
	const lab, other = "demo", "other"
	held := newInbox()
	mustConsume(t, b, lab, 200*time.Millisecond, held.holding)
	mustPublish(t, b, lab, "old 1", "")
	mustPublish(t, b, lab, "old 2", "")
	kept := mustPublish(t, b, other, "other lab", "")
	held.next(t)

	if err := b.Remove(context.Background(), lab); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if got := b.Consuming(); got != 0 {
		t.Errorf("Consuming() after Remove = %d, want 0", got)
	}
	if err := b.Remove(context.Background(), lab); err != nil {
		t.Errorf("Remove again: %v", err)
	}

	seq := mustPublish(t, b, lab, "new", "")
	in := newInbox()
	mustConsume(t, b, lab, 200*time.Millisecond, in.acking(t))
	if m := in.next(t); m.Seq != seq || m.Delivered != 1 {
		t.Errorf("after Remove: got %q seq %d delivered %d, want %q seq %d delivered 1", m.Data, m.Seq, m.Delivered, "new", seq)
	}
	in.quiet(t, 300*time.Millisecond)

	// Another lab's messages survive the purge.
	others := newInbox()
	mustConsume(t, b, other, time.Second, others.acking(t))
	if m := others.next(t); m.Seq != kept {
		t.Errorf("other lab: seq %d, want %d", m.Seq, kept)
	}
}

func TestStorm(t *testing.T) {
	t.Parallel()
	b := mustStart(t, broker.Config{})
	const lab, n, publishers = "storm", 200, 8
	in := newInbox()
	mustConsume(t, b, lab, 5*time.Second, in.acking(t))

	start := time.Now()
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			for i := range n / publishers {
				if _, _, err := b.Publish(context.Background(), lab, []byte("x"), fmt.Sprintf("%d-%d", p, i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()

	seen := make(map[uint64]bool)
	for range n {
		m := in.next(t)
		if seen[m.Seq] {
			t.Errorf("seq %d delivered twice", m.Seq)
		}
		seen[m.Seq] = true
	}
	t.Logf("%d messages published and delivered in %v", n, time.Since(start))
	in.quiet(t, 100*time.Millisecond)
}

func TestHandlerPanics(t *testing.T) {
	t.Parallel()
	b := mustStart(t, broker.Config{})
	in := newInbox()
	mustConsume(t, b, "demo", 200*time.Millisecond, func(ctx context.Context, m *broker.Msg) {
		if m.Delivered == 1 {
			panic("poisoned")
		}
		in.acking(t)(ctx, m)
	})
	seq := mustPublish(t, b, "demo", "boom", "")
	if m := in.next(t); m.Seq != seq || m.Delivered != 2 {
		t.Errorf("after panic: seq %d delivered %d, want seq %d delivered 2", m.Seq, m.Delivered, seq)
	}
}
