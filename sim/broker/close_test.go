package broker_test

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"idemlab/sim/broker"
)

func TestCloseWithBlockedHandlers(t *testing.T) {
	t.Parallel()
	b, err := broker.Start(context.Background(), broker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	labs := []string{"one", "two", "three"}
	entered := make(chan struct{}, len(labs))
	var returned atomic.Int64
	for _, lab := range labs {
		mustConsume(t, b, lab, time.Minute, func(ctx context.Context, m *broker.Msg) {
			entered <- struct{}{}
			<-ctx.Done()
			returned.Add(1)
		})
		mustPublish(t, b, lab, "blocks", "")
	}
	for range labs {
		select {
		case <-entered:
		case <-time.After(wait):
			t.Fatal("handler not called")
		}
	}

	start := time.Now()
	b.Close()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close took %v", took)
	}
	if got := returned.Load(); got != int64(len(labs)) {
		t.Errorf("%d handlers returned before Close did, want %d", got, len(labs))
	}
	if got := b.Consuming(); got != 0 {
		t.Errorf("Consuming() after Close = %d, want 0", got)
	}
	b.Close()
	b.Stop("one") // no-op once closed
}

func TestFileStorageSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const lab = "durable"

	b, err := broker.Start(context.Background(), broker.Config{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	held := newInbox()
	mustConsume(t, b, lab, time.Hour, held.holding)
	seq := mustPublish(t, b, lab, "survives", "key-9")
	held.next(t)
	b.Close()

	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		t.Fatalf("store %s empty after Close (%v)", dir, err)
	}

	b = mustStart(t, broker.Config{StoreDir: dir})
	in := newInbox()
	mustConsume(t, b, lab, 200*time.Millisecond, in.acking(t))
	m := in.next(t)
	if string(m.Data) != "survives" || m.Seq != seq || m.MsgID != "key-9" || m.Delivered != 2 {
		t.Errorf("after restart: %q seq %d id %q delivered %d, want %q seq %d id %q delivered 2",
			m.Data, m.Seq, m.MsgID, m.Delivered, "survives", seq, "key-9")
	}

	// The duplicate window survives too.
	if _, dup, err := b.Publish(context.Background(), lab, []byte("again"), "key-9"); err != nil || !dup {
		t.Errorf("republish after restart: duplicate %t, err %v; want a duplicate", dup, err)
	}
	in.quiet(t, 300*time.Millisecond)
}

// TestMemoryStoreRemoved is not parallel: it points os.TempDir at a directory of its own.
func TestMemoryStoreRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	b, err := broker.Start(context.Background(), broker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	mustPublish(t, b, "demo", "gone", "")
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Errorf("%d entries in TMPDIR while running, want the store alone", len(entries))
	}
	b.Close()
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("TMPDIR after Close holds %s, want nothing", entries[0].Name())
	}
}
