package clock

import (
	"slices"
	"sync"
	"time"
)

// Fake is a clock that moves only when told to, for tests: Advance fires
// every timer that falls due, in order of its time.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

// NewFake returns a fake clock that reads start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start}
}

// Now is the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the clock by d, firing the timers due on the way.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	end := f.now.Add(d)
	f.mu.Unlock()
	for {
		f.mu.Lock()
		t := f.next(end)
		if t == nil {
			f.now = end
			f.mu.Unlock()
			return
		}
		at := t.at
		f.now = at
		f.remove(t)
		if t.every > 0 {
			t.at = at.Add(t.every)
			f.timers = append(f.timers, t)
		}
		f.mu.Unlock()
		t.fire(at)
	}
}

// Timers is how many timers wait on the clock now: a test waits until the
// code under test has set its timer before it moves the clock.
func (f *Fake) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// TimersOf is how many timers set for d (not tickers) wait on the clock
// now: a test waits for the code under test's own, whatever else of the
// program sets timers meanwhile.
func (f *Fake) TimersOf(d time.Duration) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.timers {
		if t.after == d && t.every == 0 {
			n++
		}
	}
	return n
}

// next is the earliest timer due by end, or nil; f.mu is held.
func (f *Fake) next(end time.Time) *fakeTimer {
	var first *fakeTimer
	for _, t := range f.timers {
		if !t.at.After(end) && (first == nil || t.at.Before(first.at)) {
			first = t
		}
	}
	return first
}

// remove takes t off the clock; f.mu is held.
func (f *Fake) remove(t *fakeTimer) bool {
	i := slices.Index(f.timers, t)
	if i < 0 {
		return false
	}
	f.timers = slices.Delete(f.timers, i, i+1)
	return true
}

func (f *Fake) add(t *fakeTimer) *fakeTimer {
	f.mu.Lock()
	t.at = f.now.Add(t.after)
	f.timers = append(f.timers, t)
	f.mu.Unlock()
	return t
}

// NewTimer fires once, when the clock has moved d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	return f.add(&fakeTimer{clock: f, after: d, c: make(chan time.Time, 1)})
}

// AfterFunc calls fn in a goroutine once the clock has moved d.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	return f.add(&fakeTimer{clock: f, after: d, fn: fn})
}

// NewTicker fires every d of the clock's time.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	return fakeTicker{f.add(&fakeTimer{clock: f, after: d, every: d, c: make(chan time.Time, 1)})}
}

type fakeTicker struct{ t *fakeTimer }

func (t fakeTicker) C() <-chan time.Time { return t.t.c }
func (t fakeTicker) Stop()               { t.t.Stop() }

type fakeTimer struct {
	clock        *Fake
	after, every time.Duration
	at           time.Time
	c            chan time.Time
	fn           func()
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) fire(at time.Time) {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.c <- at:
	default: // a ticker whose reader is behind skips, as a real one does
	}
}

func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	return t.clock.remove(t)
}
