// Package outage tells when a part the lab depends on (the database,
// Redis, the broker) stops answering and when it answers again: one log
// line at each end of an outage, however many requests meet it meanwhile,
// so that a log of a night with Redis down reads two lines, not a million.
package outage

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Watch follows one part's outages. Its methods are safe for concurrent
// use and cheap while the part answers: a success is one atomic load.
type Watch struct {
	part  string // as the log names it: "redis", "broker", "database"
	log   *slog.Logger
	attrs []any // what names the part: its flag, its address
	now   func() time.Time

	down atomic.Bool
	mu   sync.Mutex
	// since is when the outage began; met counts the failures seen during
	// it (the requests that met it).
	since time.Time
	met   int64
}

// New returns the watch of a part, logging to log (nil: nowhere) with
// attrs naming it (say, "flag", "-redis", "url", …).
func New(log *slog.Logger, part string, attrs ...any) *Watch {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watch{part: part, log: log, attrs: attrs, now: time.Now}
}

// Failed says the part did not answer: the first failure of an outage is
// logged, with its cause and what it means; the others are counted.
func (w *Watch) Failed(err error, means string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.met++
	if w.down.Load() {
		return
	}
	w.down.Store(true)
	w.since, w.met = w.now(), 1
	w.log.Warn(w.part+" does not answer: "+means, append([]any{"part", w.part, "err", err}, w.attrs...)...)
}

// Ok says the part answered: the end of an outage is logged, with how
// long it lasted and how many failures it caused.
func (w *Watch) Ok() {
	if !w.down.Load() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.down.Load() {
		return
	}
	w.down.Store(false)
	took := w.now().Sub(w.since).Round(time.Millisecond)
	w.log.Info(w.part+" answers again", append([]any{"part", w.part, "down_for", took.String(), "failures", w.met}, w.attrs...)...)
}

// Down reports whether the part's last word was a failure.
func (w *Watch) Down() bool { return w.down.Load() }

// Part is the part's name, as the log and the problems name it.
func (w *Watch) Part() string { return w.part }
