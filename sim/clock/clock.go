// Package clock is the time every wait of the lab goes by: retries' backoff,
// the client's timeout, the server's work and gap, lock timeouts, expiry,
// and the sweeps. A real clock in the lab; a fake one in tests, moved by
// hand, so that a test of a ten-second lock runs in microseconds.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer fires once, after d.
	NewTimer(d time.Duration) Timer
	// AfterFunc calls f in a goroutine of its own after d.
	AfterFunc(d time.Duration, f func()) Timer
	// NewTicker fires every d.
	NewTicker(d time.Duration) Ticker
}

// Timer is a timer of a Clock.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// Ticker is a ticker of a Clock.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Real is the system's clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time                 { return time.Now() }
func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }
func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{time.AfterFunc(d, f)}
}
func (realClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }

type realTicker struct{ t *time.Ticker }

func (t realTicker) C() <-chan time.Time { return t.t.C }
func (t realTicker) Stop()               { t.t.Stop() }

// Ticks calls fn at each tick of t until ctx ends, then stops t.
func Ticks(ctx context.Context, t Ticker, fn func()) {
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			fn()
		}
	}
}

// Sleep waits d on the clock, or until ctx ends: then it returns ctx's error.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// WithTimeout is context.WithTimeout by the clock: the context ends with
// context.DeadlineExceeded once d has passed on c.
func WithTimeout(ctx context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := c.(realClock); ok {
		return context.WithTimeout(ctx, d)
	}
	deadline := c.Now().Add(d)
	ctx, cancel := context.WithCancelCause(ctx)
	t := c.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	return deadlined{ctx, deadline}, func() { t.Stop(); cancel(context.Canceled) }
}

// deadlined is a context with a deadline by another clock than the
// system's: it has the deadline, and its cancellation for it reads as
// context.DeadlineExceeded, as a real deadline's does.
type deadlined struct {
	context.Context
	deadline time.Time
}

// Deadline is the context's deadline, by its clock.
func (d deadlined) Deadline() (time.Time, bool) { return d.deadline, true }

func (d deadlined) Err() error {
	if err := d.Context.Err(); err != nil {
		if cause := context.Cause(d.Context); cause == context.DeadlineExceeded {
			return cause
		}
		return err
	}
	return nil
}
