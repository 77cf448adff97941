package events_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/sim/events"
)

var at = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

func newBus() *events.Bus { return events.New(func() time.Time { return at }) }

// event is the n-th event published, its number in OrderID.
func event(n int) sim.Event {
	return sim.Event{Lab: "demo", Kind: sim.EventCharge, OrderID: strconv.Itoa(n)}
}

// drain reads what the subscriber has waiting: each event's number, or
// "start-over".
func drain(s *events.Sub) []string {
	var out []string
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				return append(out, "closed")
			}
			if ev.Kind == sim.EventStartOver {
				out = append(out, "start-over")
			} else {
				out = append(out, ev.OrderID)
			}
		default:
			return out
		}
	}
}

// A subscriber that does not read overflows its buffer: it is told to
// start over, and what it gets after that is in order again. Never a gap
// without a start-over before it.
func TestOverflowStartsOver(t *testing.T) {
	for _, tc := range []struct {
		name      string
		size      int
		published int
		want      []string
	}{
		{"within the buffer", 4, 4, []string{"1", "2", "3", "4"}},
		{"one over", 4, 5, []string{"start-over"}},
		{"over, then more", 4, 7, []string{"start-over", "6", "7"}},
		{"over twice", 4, 9, []string{"start-over"}},
		{"over twice, then more", 4, 10, []string{"start-over", "10"}},
		{"a buffer of at least two", 0, 4, []string{"start-over", "4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBus()
			s := b.Subscribe(tc.size)
			defer s.Close()
			for n := 1; n <= tc.published; n++ {
				b.Publish(event(n))
			}
			if diff := cmp.Diff(tc.want, drain(s)); diff != "" {
				t.Errorf("read (-want +got):\n%s", diff)
			}
		})
	}
}

// However a reader falls behind, what it reads is every event in order,
// except where a start-over says it missed some; it ends with the last
// event or a start-over.
func TestNoSilentGap(t *testing.T) {
	for _, tc := range []struct{ size, readEvery int }{{2, 3}, {4, 5}, {4, 1}, {16, 20}, {16, 7}} {
		t.Run(strconv.Itoa(tc.size)+"/"+strconv.Itoa(tc.readEvery), func(t *testing.T) {
			b := newBus()
			s := b.Subscribe(tc.size)
			defer s.Close()
			var got []string
			for n := 1; n <= 500; n++ {
				b.Publish(event(n))
				if n%tc.readEvery == 0 {
					got = append(got, drain(s)...)
				}
			}
			got = append(got, drain(s)...)
			last, over := 0, false
			for _, e := range got {
				if e == "start-over" {
					over = true
					continue
				}
				n, _ := strconv.Atoi(e)
				if n <= last || (n != last+1 && !over) {
					t.Fatalf("event %d after %d, with no start-over between: %v", n, last, got)
				}
				last, over = n, false
			}
			if last != 500 && !over {
				t.Errorf("the reader ends at event %d of 500, not told to start over", last)
			}
		})
	}
}

// One subscriber's overflow is its own: another, reading along, gets
// every event in order and is never told to start over.
func TestOthersUnaffected(t *testing.T) {
	b := newBus()
	slow, fast := b.Subscribe(2), b.Subscribe(2)
	defer slow.Close()
	defer fast.Close()
	var got, want []string
	for n := 1; n <= 100; n++ {
		b.Publish(event(n))
		got = append(got, drain(fast)...)
		want = append(want, strconv.Itoa(n))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the reader read (-want +got):\n%s", diff)
	}
	if got := drain(slow); len(got) == 0 || got[0] != "start-over" {
		t.Errorf("the one behind read %v, want a start-over first", got)
	}
	if fast.Lost() != 0 {
		t.Errorf("the reader lost %d events", fast.Lost())
	}
}

// Publishing stamps an event with the bus's time, unless it has one.
func TestPublishStamps(t *testing.T) {
	b := newBus()
	s := b.Subscribe(4)
	defer s.Close()
	own := at.Add(-time.Hour)
	b.Publish(sim.Event{Kind: sim.EventReset})
	b.Publish(sim.Event{Kind: sim.EventReset, At: own})
	var got []time.Time
	for range 2 {
		got = append(got, (<-s.Events()).At)
	}
	if diff := cmp.Diff([]time.Time{at, own}, got); diff != "" {
		t.Errorf("stamped (-want +got):\n%s", diff)
	}
}

// Close ends the subscriber's channel, after what it had waiting; the bus
// publishes on without it, and closing again does nothing.
func TestCloseEndsTheChannel(t *testing.T) {
	b := newBus()
	s, other := b.Subscribe(4), b.Subscribe(4)
	defer other.Close()
	b.Publish(event(1))
	s.Close()
	s.Close()
	b.Publish(event(2))
	if diff := cmp.Diff([]string{"1", "closed"}, drain(s)); diff != "" {
		t.Errorf("the closed subscriber read (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1", "2"}, drain(other)); diff != "" {
		t.Errorf("the other read (-want +got):\n%s", diff)
	}
}

// Lost counts the events a subscriber missed: those published, not the
// start-overs that told it so.
func TestLostCountsEvents(t *testing.T) {
	for _, tc := range []struct{ published, lost int }{{4, 0}, {5, 5}, {7, 5}, {9, 9}, {10, 9}} {
		b := newBus()
		s := b.Subscribe(4)
		for n := 1; n <= tc.published; n++ {
			b.Publish(event(n))
		}
		if got := s.Lost(); got != tc.lost {
			t.Errorf("after %d events: lost %d, want %d", tc.published, got, tc.lost)
		}
		s.Close()
	}
}
