package web

import (
	"bytes"
	"strings"
	"sync"

	"idemlab/sim"
	"idemlab/views"
)

// stream is one open page. It holds the newest message of each kind (a
// swap of the regions, the settings): a page that falls behind gets the
// latest state, never an older one, and never loses a settings change.
type stream struct {
	lang views.Lang // the page's language
	mu   sync.Mutex
	swap []byte
	sets []byte
	gone bool          // the lab was removed: the stream ends
	wake chan struct{} // something new is held
}

// put keeps the newest swap and settings message (nil leaves one as is)
// and wakes the stream's writer.
func (s *stream) put(swap, sets []byte) {
	s.mu.Lock()
	if swap != nil {
		s.swap = swap
	}
	if sets != nil {
		s.sets = sets
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// end tells the stream its lab is gone.
func (s *stream) end() {
	s.mu.Lock()
	s.gone = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// take returns what the stream holds and empties it.
func (s *stream) take() (swap, sets []byte, gone bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	swap, sets, gone = s.swap, s.sets, s.gone
	s.swap, s.sets = nil, nil
	return swap, sets, gone
}

// logRing is a lab's last logKeep log lines: adding one costs the same
// however long the log has run. A charge's line is kept as its event and
// put in words only when a page reads the log: the charge is the hot path,
// and most of its lines are never read.
type logRing struct {
	lines [logKeep]logEntry
	next  int // where the next line goes
	n     int // lines held
}

// logEntry is a log line, or the charge event it says.
type logEntry struct {
	line   views.LogLine
	charge sim.Event // Kind EventCharge: the line is said from it when read
}

func (r *logRing) add(line views.LogLine) { r.put(logEntry{line: line}) }

// addCharge keeps a charge's event for its line.
func (r *logRing) addCharge(ev sim.Event) { r.put(logEntry{charge: ev}) }

func (r *logRing) put(e logEntry) {
	r.lines[r.next] = e
	r.next = (r.next + 1) % logKeep
	r.n = min(r.n+1, logKeep)
}

// newestFirst returns a copy of the lines held, the newest first.
func (r *logRing) newestFirst() []views.LogLine {
	out := make([]views.LogLine, r.n)
	for i := range out {
		e := &r.lines[(r.next-1-i+2*logKeep)%logKeep]
		if e.charge.Kind == sim.EventCharge {
			out[i] = views.LogLine{At: e.charge.At.Format("15:04:05.000"), Kind: "server", Msg: chargeText(e.charge)}
			continue
		}
		out[i] = e.line
	}
	return out
}

// sseData writes data as SSE "data:" lines.
func sseData(b *bytes.Buffer, event string, data []byte) {
	if event != "" {
		b.WriteString("event: " + event + "\n")
	}
	for _, line := range strings.Split(string(data), "\n") {
		b.WriteString("data: ")
		b.WriteString(line)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
}
