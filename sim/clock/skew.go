package clock

import (
	"sync/atomic"
	"time"
)

// Skew is how far another clock is from this process's (a database's,
// which every process on it shares), read now and then. A reading is good
// to half its round trip and the other clock's microsecond; one that agrees
// with the skew in use within both readings' margins reads the same clock
// and leaves it, so a clock moved by it does not step back and forth by
// each reading's noise (a lock that has timed out, then has not). Its zero
// value is no skew, none read yet.
type Skew struct {
	skew  atomic.Int64 // the other clock minus this one, ns
	noise atomic.Int64 // how far off that reading may be, ns; 0 before the first
}

// Read takes a reading: the other clock said at, asked at sent and
// answering at back by this process's clock.
func (s *Skew) Read(sent, back, at time.Time) {
	trip := back.Sub(sent)
	half := trip/2 + time.Microsecond
	d := at.Sub(sent.Add(trip / 2))
	if was := s.noise.Load(); was > 0 && (d-s.Of()).Abs() <= half+time.Duration(was) {
		return
	}
	s.skew.Store(int64(d))
	s.noise.Store(int64(half))
}

// Of is how far the other clock is from this process's.
func (s *Skew) Of() time.Duration { return time.Duration(s.skew.Load()) }

// Moved is c moved to the other clock by the skew, as it is at each Now.
func (s *Skew) Moved(c Clock) Clock { return skewed{c, s} }

// skewed is a clock moved by a skew read now and then.
type skewed struct {
	Clock
	skew *Skew
}

func (c skewed) Now() time.Time { return c.Clock.Now().Add(c.skew.Of()) }
