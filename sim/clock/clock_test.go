package clock_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"idemlab/sim/clock"
)

// WithTimeout on a fake clock ends its context once the clock has moved
// past the timeout, with context.DeadlineExceeded as a real deadline does;
// cancelled first, it ends with context.Canceled and its timer goes.
func TestWithTimeoutOnFakeClock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		moves  []time.Duration
		cancel bool // the caller cancels after the moves
		want   error
	}{
		{"before the timeout", []time.Duration{999 * time.Millisecond}, false, nil},
		{"at the timeout", []time.Duration{time.Second}, false, context.DeadlineExceeded},
		{"past it, in steps", []time.Duration{600 * time.Millisecond, 600 * time.Millisecond}, false, context.DeadlineExceeded},
		{"cancelled first", []time.Duration{500 * time.Millisecond}, true, context.Canceled},
	} {
		synctest.Test(t, func(t *testing.T) {
			f := clock.NewFake(start)
			ctx, cancel := clock.WithTimeout(context.Background(), f, time.Second)
			defer cancel()
			for _, d := range tc.moves {
				f.Advance(d)
			}
			if tc.cancel {
				cancel()
			}
			synctest.Wait() // the timer's function runs in a goroutine of its own
			if err := ctx.Err(); err != tc.want {
				t.Errorf("%s: ended with %v, want %v", tc.name, err, tc.want)
			}
			if n, want := f.Timers(), map[bool]int{true: 1, false: 0}[tc.want == nil]; n != want {
				t.Errorf("%s: %d timers wait, want %d", tc.name, n, want)
			}
		})
	}
}

// A context derived from a parent on the fake clock ends with the
// parent's cancellation.
func TestWithTimeoutParentCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := clock.NewFake(start)
		parent, cancelParent := context.WithCancel(context.Background())
		ctx, cancel := clock.WithTimeout(parent, f, time.Second)
		defer cancel()
		cancelParent()
		synctest.Wait()
		if err := ctx.Err(); err != context.Canceled {
			t.Errorf("ended with %v, want %v", err, context.Canceled)
		}
	})
}

// Sleep waits on the clock: it returns once the clock has moved d, or with
// the context's error when that ends first; nothing at all waits for d <= 0.
func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := clock.NewFake(start)
		if err := clock.Sleep(context.Background(), f, 0); err != nil {
			t.Errorf("Sleep(0): %v", err)
		}
		if n := f.Timers(); n != 0 {
			t.Errorf("Sleep(0) set %d timers", n)
		}
		done := make(chan error, 1)
		go func() { done <- clock.Sleep(context.Background(), f, time.Minute) }()
		synctest.Wait() // the sleeper waits on its timer
		f.Advance(time.Minute - time.Millisecond)
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Sleep returned %v before its time", err)
		default:
		}
		f.Advance(time.Millisecond)
		if err := <-done; err != nil {
			t.Errorf("Sleep after the clock moved: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { done <- clock.Sleep(ctx, f, time.Minute) }()
		synctest.Wait()
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Sleep whose context ended: %v, want %v", err, context.Canceled)
		}
		if n := f.Timers(); n != 0 {
			t.Errorf("%d timers wait after the sleeps, want 0", n)
		}
	})
}

// On the real clock WithTimeout is context.WithTimeout: it has a deadline.
func TestWithTimeoutOnRealClock(t *testing.T) {
	ctx, cancel := clock.WithTimeout(context.Background(), clock.Real(), time.Hour)
	defer cancel()
	if _, ok := ctx.Deadline(); !ok {
		t.Error("no deadline on the real clock")
	}
}

// Ticks calls its function once a tick, and once its context ends it
// returns and stops the ticker.
func TestTicks(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	calls := make(chan struct{})
	done := make(chan struct{})
	tk := f.NewTicker(time.Second)
	go func() {
		defer close(done)
		clock.Ticks(ctx, tk, func() { calls <- struct{}{} })
	}()
	for i := range 3 {
		f.Advance(time.Second)
		select {
		case <-calls:
		case <-time.After(5 * time.Second):
			t.Fatalf("tick %d: the function was not called", i+1)
		}
	}
	cancel()
	<-done
	if n := f.Timers(); n != 0 {
		t.Errorf("%d timers wait once Ticks returned, want 0", n)
	}
}
