package clock_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"idemlab/sim/clock"
)

var start = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

// fired drains the timers' channels: for each, the time it fired at, or
// the zero time when it has not.
func fired(cs []<-chan time.Time) []time.Duration {
	out := make([]time.Duration, len(cs))
	for i, c := range cs {
		select {
		case at := <-c:
			out[i] = at.Sub(start)
		default:
			out[i] = -1
		}
	}
	return out
}

// Advance fires the timers that fall due on the way, each at its own time
// (the clock stands at it when it fires), and none before its time.
func TestFakeTimersFireInOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after []time.Duration // the timers, as set at the start
		moves []time.Duration // the clock's moves
		want  []time.Duration // when each fired, from the start; -1: not yet
	}{
		{"none due", []time.Duration{time.Second}, []time.Duration{999 * time.Millisecond}, []time.Duration{-1}},
		{"due exactly", []time.Duration{time.Second}, []time.Duration{time.Second}, []time.Duration{time.Second}},
		{"in order of time, not of setting",
			[]time.Duration{3 * time.Second, time.Second, 2 * time.Second}, []time.Duration{10 * time.Second},
			[]time.Duration{3 * time.Second, time.Second, 2 * time.Second}},
		{"some now, some later",
			[]time.Duration{time.Second, 5 * time.Second}, []time.Duration{2 * time.Second},
			[]time.Duration{time.Second, -1}},
		{"step by step",
			[]time.Duration{time.Second, 5 * time.Second}, []time.Duration{2 * time.Second, 2 * time.Second, time.Second},
			[]time.Duration{time.Second, 5 * time.Second}},
		{"zero fires at the next move", []time.Duration{0}, []time.Duration{0}, []time.Duration{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := clock.NewFake(start)
			var cs []<-chan time.Time
			for _, d := range tc.after {
				cs = append(cs, f.NewTimer(d).C())
			}
			if got := f.Timers(); got != len(tc.after) {
				t.Errorf("%d timers wait, want %d", got, len(tc.after))
			}
			var total time.Duration
			for _, d := range tc.moves {
				f.Advance(d)
				total += d
			}
			if got := f.Now(); !got.Equal(start.Add(total)) {
				t.Errorf("the clock reads %v, want %v", got, start.Add(total))
			}
			if diff := cmp.Diff(tc.want, fired(cs)); diff != "" {
				t.Errorf("fired at (-want +got):\n%s", diff)
			}
		})
	}
}

// A timer stopped before its time never fires; Stop says whether it
// stopped one still waiting.
func TestFakeTimerStop(t *testing.T) {
	f := clock.NewFake(start)
	stopped, kept := f.NewTimer(time.Second), f.NewTimer(time.Second)
	if !stopped.Stop() {
		t.Error("Stop of a waiting timer: false, want true")
	}
	if stopped.Stop() {
		t.Error("Stop again: true, want false")
	}
	f.Advance(time.Second)
	if diff := cmp.Diff([]time.Duration{-1, time.Second}, fired([]<-chan time.Time{stopped.C(), kept.C()})); diff != "" {
		t.Errorf("fired at (-want +got):\n%s", diff)
	}
	if kept.Stop() {
		t.Error("Stop of a timer that fired: true, want false")
	}
	if got := f.Timers(); got != 0 {
		t.Errorf("%d timers wait, want 0", got)
	}
}

// A ticker fires every period; a reader that falls behind gets one tick,
// not a backlog; Stop ends it.
func TestFakeTicker(t *testing.T) {
	f := clock.NewFake(start)
	tk := f.NewTicker(time.Second)
	ticks := func() int {
		for n := 0; ; n++ {
			select {
			case <-tk.C():
			default:
				return n
			}
		}
	}
	var got []int
	for _, d := range []time.Duration{time.Second, time.Second, 500 * time.Millisecond, 500 * time.Millisecond, 3 * time.Second} {
		f.Advance(d)
		got = append(got, ticks())
	}
	tk.Stop()
	f.Advance(5 * time.Second)
	got = append(got, ticks())
	if diff := cmp.Diff([]int{1, 1, 0, 1, 1, 0}, got); diff != "" {
		t.Errorf("ticks after each move (-want +got):\n%s", diff)
	}
	if n := f.Timers(); n != 0 {
		t.Errorf("%d timers wait after Stop, want 0", n)
	}
}

// A tick carries the time it fired at, as a real ticker's does.
func TestFakeTickerTime(t *testing.T) {
	f := clock.NewFake(start)
	tk := f.NewTicker(time.Second)
	var got []time.Duration
	for _, d := range []time.Duration{time.Second, time.Second, 3 * time.Second} {
		f.Advance(d)
		got = append(got, fired([]<-chan time.Time{tk.C()})...)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, got); diff != "" {
		t.Errorf("ticks at (-want +got):\n%s", diff)
	}
}

// AfterFunc runs its function once its time comes, and not if stopped.
func TestFakeAfterFunc(t *testing.T) {
	f := clock.NewFake(start)
	ran := make(chan time.Time, 2)
	f.AfterFunc(time.Second, func() { ran <- f.Now() })
	f.AfterFunc(time.Second, func() { ran <- start }).Stop()
	f.Advance(time.Second)
	if at := <-ran; !at.Equal(start.Add(time.Second)) {
		t.Errorf("ran at %v, want %v", at, start.Add(time.Second))
	}
	f.Advance(time.Hour)
	select {
	case at := <-ran:
		t.Errorf("a stopped function ran (at %v)", at)
	default:
	}
}

// TimersOf counts the timers set for one duration, not tickers of it nor
// timers of another, and forgets a timer once it has fired.
func TestFakeTimersOf(t *testing.T) {
	f := clock.NewFake(start)
	f.NewTimer(time.Second)
	f.AfterFunc(time.Second, func() {})
	f.NewTimer(2 * time.Second)
	tk := f.NewTicker(time.Second)
	defer tk.Stop()
	if got := f.TimersOf(time.Second); got != 2 {
		t.Errorf("TimersOf(1s) = %d, want 2", got)
	}
	f.Advance(time.Second)
	if got := f.TimersOf(time.Second); got != 0 {
		t.Errorf("TimersOf(1s) after they fired = %d, want 0", got)
	}
}
