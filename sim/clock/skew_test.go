package clock

import (
	"testing"
	"time"
)

// A reading within the margins of the one in use (half of each one's
// round trip) leaves the skew as it was; one outside them replaces it, and
// a clock moved by it follows.
func TestSkewKeepsItsReadingWithinTheNoise(t *testing.T) {
	t.Parallel()
	var s Skew
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	s.Read(t0, t0.Add(2*time.Millisecond), t0.Add(time.Millisecond+300*time.Microsecond)) // 300 µs, ±1 ms
	if got := s.Of(); got != 300*time.Microsecond {
		t.Fatalf("the first reading: %v, want 300µs", got)
	}
	t1 := t0.Add(time.Minute)
	for _, off := range []time.Duration{-700 * time.Microsecond, 0, 1200 * time.Microsecond} { // each within 1 ms + 1 ms of 300 µs
		s.Read(t1, t1.Add(2*time.Millisecond), t1.Add(time.Millisecond+off))
		if got := s.Of(); got != 300*time.Microsecond {
			t.Errorf("a reading of %v, within the margins: the skew moved to %v", off, got)
		}
	}
	s.Read(t1, t1.Add(2*time.Millisecond), t1.Add(time.Millisecond+5*time.Millisecond))
	if got := s.Of(); got != 5*time.Millisecond {
		t.Errorf("a reading of 5ms, outside the margins: the skew is %v, want 5ms", got)
	}
	f := NewFake(t0)
	if got := s.Moved(f).Now(); !got.Equal(t0.Add(5 * time.Millisecond)) {
		t.Errorf("the moved clock says %v, want %v", got, t0.Add(5*time.Millisecond))
	}
}
