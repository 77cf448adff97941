package keys

import (
	"sync"
	"time"
)

// The give-backs a store owes: keys that a charge took and must not keep,
// whose give-back the store did not answer. A SET that was sent and never
// answered may also still land (it may sit in a stopped Redis's socket),
// so it is owed back the same way. Each is retried in the background with
// backoff, and run first by any SET NX of its key in this process (Take).
//
// The list is per process and bounded (Config.MaxOwed, counting the keys
// charges hold at the moment, which may become owed): at the bound a new
// SET NX is refused before it is sent (ErrOwedFull, a 503), so that the
// store never takes a key it could not give back. An entry ends when the
// store says the key no longer holds its value (a SET that was never
// answered is checked once more a moment later, in case it landed just
// after), or with the key's TTL, counted again from each try the store did
// not answer, and never while the store is down (a SET that lands later
// lives its whole TTL from then).
type owedList struct {
	mu       sync.Mutex
	max      int
	reserved int // held by charges, which may owe them yet
	n        int
	byKey    map[string][]*owed // by lab and key
	kick     chan struct{}
}

// owed is one give-back owed.
type owed struct {
	lab, key, value string
	ttl             time.Duration
	landed          bool      // the SET is known to have landed (the charge failed after it)
	until           time.Time // it ends then: the key has expired by itself
	next            time.Time // its next try
	wait            time.Duration
	absentAt        time.Time // the store first said the key does not hold it (a SET never answered: checked once more)
	told            bool      // the key was said to be free
	gone            bool
}

const (
	firstWait  = 100 * time.Millisecond
	maxWait    = 5 * time.Second
	confirm    = time.Second // after which a SET never answered is taken not to land any more
	tryTimeout = time.Second
	idle       = time.Hour
)

func newOwedList(max int) *owedList {
	return &owedList{max: max, byKey: map[string][]*owed{}, kick: make(chan struct{}, 1)}
}

func slot(lab, key string) string { return lab + "\x00" + key }

// reserve holds room for one give-back, for a charge about to take a key.
func (o *owedList) reserve() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n+o.reserved >= o.max {
		return false
	}
	o.reserved++
	return true
}

// release lets go of a reservation the charge no longer needs.
func (o *owedList) release() {
	o.mu.Lock()
	o.reserved--
	o.mu.Unlock()
}

// values are the values owed back for the lab's key, oldest first.
func (o *owedList) values(lab, key string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	es := o.byKey[slot(lab, key)]
	if len(es) == 0 {
		return nil
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.value
	}
	return out
}

// owe turns the hold's reservation into a give-back owed, tried at once.
func (s *Store) owe(h *Hold, landed bool) {
	now := time.Now()
	o := s.owed
	o.mu.Lock()
	o.reserved--
	o.n++
	k := slot(h.lab, h.key)
	o.byKey[k] = append(o.byKey[k], &owed{lab: h.lab, key: h.key, value: h.value, ttl: h.ttl, landed: landed,
		until: now.Add(h.ttl), next: now.Add(firstWait), wait: firstWait})
	o.mu.Unlock()
	o.wake()
}

// Owed is how many give-backs the store owes now.
func (s *Store) Owed() int {
	s.owed.mu.Lock()
	defer s.owed.mu.Unlock()
	return s.owed.n
}

// answered records what Take's script found of the ghosts of the lab's
// key: the one it gave back (freed, 1-based), the others absent.
func (s *Store) answered(lab, key string, ghosts []string, freed int) {
	now := time.Now()
	var free bool
	s.owed.mu.Lock()
	for _, e := range s.owed.byKey[slot(lab, key)] {
		for i, v := range ghosts {
			if v == e.value {
				free = s.owed.settled(e, i+1 == freed, now) || free
			}
		}
	}
	s.owed.mu.Unlock()
	s.owed.wake() // a SET never answered is checked once more
	if free && s.given != nil {
		s.given(lab, key)
	}
}

// settled records that the store answered for e: deleted its key, or
// found that the key does not hold e's value. It reports whether the key
// is now to be said free (the first time only).
func (o *owedList) settled(e *owed, deleted bool, now time.Time) (tell bool) {
	tell = !e.told
	e.told = true
	switch {
	case deleted || e.landed:
		o.drop(e)
	case e.absentAt.IsZero():
		e.absentAt, e.next = now, now.Add(confirm)
	case now.Sub(e.absentAt) >= confirm:
		o.drop(e)
	default:
		e.next = e.absentAt.Add(confirm)
	}
	return tell
}

// failed records that the store did not answer for e: it is tried again
// after a longer wait, and lives a TTL from now (its SET may land later).
func (o *owedList) failed(e *owed, now time.Time) {
	e.wait = min(2*e.wait, maxWait)
	e.next = now.Add(e.wait)
	e.until = maxTime(e.until, now.Add(e.ttl))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// drop removes e from the list.
func (o *owedList) drop(e *owed) {
	if e.gone {
		return
	}
	e.gone = true
	o.n--
	k := slot(e.lab, e.key)
	es := o.byKey[k]
	for i, x := range es {
		if x == e {
			es = append(es[:i:i], es[i+1:]...)
			break
		}
	}
	if len(es) == 0 {
		delete(o.byKey, k)
	} else {
		o.byKey[k] = es
	}
}

// due takes out the entries whose TTL has ended (telling the keys free),
// unless the store is down (a SET may land yet, with its whole TTL), and
// lists those due for a try; it returns when the next one is due.
func (o *owedList) due(now time.Time, down bool) (due, expired []*owed, next time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	next = idle
	for _, es := range o.byKey {
		for _, e := range es {
			switch {
			case now.After(e.until) && !down:
				expired = append(expired, e)
			case !e.next.After(now):
				due = append(due, e)
			default:
				next = min(next, e.next.Sub(now))
			}
		}
	}
	for _, e := range expired {
		o.drop(e)
	}
	return due, expired, next
}
