package web

import (
	"time"

	"idemlab/sim"
	"idemlab/views"
)

// labFeed is one lab's log, streams and rendering state.
type labFeed struct {
	log       logRing
	streams   map[*stream]struct{}
	waiting   views.Msg           // an automatic retry's wait, said
	flying    map[flight]struct{} // attempts on their way
	settings  *sim.Settings       // last seen, to name what changed
	last      time.Time           // of the last event
	rendering bool                // a render of this lab is on its way
	again     bool                // something changed while it was
}

func retryProgress(r *sim.RetryWait) views.Msg {
	switch {
	case r == nil:
		return views.Msg{}
	case r.Busy:
		return views.M("log.progress.busy", r.Next, r.Of)
	case r.Spent:
		return views.M("log.progress.spent", r.Next, r.Of)
	}
	return views.M("log.progress", r.Next, r.Of, r.Delay.Milliseconds())
}

// flight is one attempt of one operation.
type flight struct {
	op string
	n  int
}

// maxFlights bounds the attempts a feed keeps track of; the server's own
// limit on requests in flight is far below it.
const maxFlights = 1024

// fly notes that an attempt has started (on) or ended; a started attempt
// ends the wait before it.
func (f *labFeed) fly(a flight, on bool) {
	if !on {
		delete(f.flying, a)
		return
	}
	f.waiting = views.Msg{}
	if f.flying == nil {
		f.flying = map[flight]struct{}{}
	}
	if len(f.flying) < maxFlights {
		f.flying[a] = struct{}{}
	}
}

// progress says what is under way: an automatic retry's wait, or the
// attempts on their way (a race, a slow network), or nothing.
func (f *labFeed) progress() views.Msg {
	switch {
	case !f.waiting.IsZero():
		return f.waiting
	case len(f.flying) == 1:
		for a := range f.flying {
			return views.M("log.progress.flight", a.n)
		}
	case len(f.flying) > 1:
		return views.M("log.progress.flights", views.Count{N: int64(len(f.flying)), Key: "log.n.flights"})
	}
	return views.Msg{}
}
