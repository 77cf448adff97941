package web

import (
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/views"
)

// logKeep is how many event-log lines a lab keeps for new pages.
const logKeep = 60

// coalesce is how long the hub gathers a lab's events before it renders
// them: a race of 64 attempts becomes a few updates, not a hundred.
const coalesce = 25 * time.Millisecond

// feedIdle is how long a lab's feed (its log, for pages opened later) is
// kept after its last event when no page of it is open.
const feedIdle = 10 * time.Minute

// renderAtOnce bounds how many labs render at the same moment.
const renderAtOnce = 8

// Hub fans a lab's changes out to every open page of it over Server-Sent
// Events. Each change renders the lab's regions once per language; every
// stream of the lab gets the same bytes. Each lab renders on its own,
// one render at a time per lab: a big or busy lab never delays another's
// updates, and a lab's updates never overtake each other. A slow stream
// only ever holds the latest state.
type Hub struct {
	house *house.House
	clock clock.Clock // the house's: the coalescing of renders, the sweep
	sub   *events.Sub // the labs' events, read by one goroutine of the hub's
	log   *slog.Logger
	max   int // streams at most, across all labs
	share int // streams at most of one client address

	mu      sync.Mutex
	labs    map[string]*labFeed
	streams int
	clients map[string]int // streams open per client address
	closed  chan struct{}
	wg      sync.WaitGroup // renders and the sweeper
	slots   chan struct{}  // renders running
}

// hubBuffer is how many events the hub may fall behind by before it
// starts over: every page of every lab re-rendered whole.
const hubBuffer = 4096

// NewHub returns a hub over the labs' events; Close stops it and ends
// every stream. most bounds the streams open at once; one client address
// may hold a quarter of them.
func NewHub(hs *house.House, logger *slog.Logger, most int) *Hub {
	h := &Hub{house: hs, clock: hs.Clock, sub: hs.Bus.Subscribe(hubBuffer), log: logger, max: most, share: max(most/4, 1),
		labs: map[string]*labFeed{}, clients: map[string]int{}, closed: make(chan struct{}), slots: make(chan struct{}, renderAtOnce)}
	h.wg.Add(2)
	go h.follow()
	go h.sweep()
	return h
}

// follow reads the labs' events until the hub closes.
func (h *Hub) follow() {
	defer h.wg.Done()
	for {
		select {
		case <-h.closed:
			return
		case ev, ok := <-h.sub.Events():
			if !ok {
				return
			}
			h.notify(ev)
		}
	}
}

// Close ends every stream and waits for the renders under way.
func (h *Hub) Close() {
	h.mu.Lock()
	select {
	case <-h.closed:
		h.mu.Unlock()
		return
	default:
	}
	close(h.closed)
	h.mu.Unlock()
	h.sub.Close()
	h.wg.Wait()
}

func (h *Hub) feed(lab string) *labFeed {
	f, ok := h.labs[lab]
	if !ok {
		f = &labFeed{streams: map[*stream]struct{}{}, last: h.clock.Now()}
		h.labs[lab] = f
	}
	return f
}

// notify is told of every event of the labs; it records the log line and
// starts the lab's render, without blocking.
func (h *Hub) notify(ev sim.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Kind == sim.EventStartOver {
		h.startOver()
		return
	}
	if ev.Kind == sim.EventGone {
		if f, ok := h.labs[ev.Lab]; ok {
			for s := range f.streams {
				s.end()
			}
			delete(h.labs, ev.Lab)
		}
		return
	}
	f := h.feed(ev.Lab)
	f.last = h.clock.Now()
	switch ev.Kind {
	case sim.EventReset:
		f.log, f.waiting, f.flying = logRing{}, views.Msg{}, nil
	case sim.EventRetry:
		f.waiting = retryProgress(ev.Retry)
	case sim.EventAttempt:
		if ev.Attempt != nil && ev.Operation != nil {
			f.fly(flight{ev.Operation.ID, ev.Attempt.N}, ev.Attempt.FinishedAt == nil)
		}
	}
	if ev.Kind == sim.EventCharge {
		f.log.addCharge(ev)
	} else {
		for _, text := range describe(ev, f.settings) {
			f.log.add(views.LogLine{At: ev.At.Format("15:04:05.000"), Kind: text.kind, Msg: text.msg})
		}
	}
	if ev.Kind == sim.EventSettings && ev.Settings != nil {
		f.settings = ev.Settings
		msg, _ := json.Marshal(settingsView(*ev.Settings))
		for s := range f.streams {
			s.put(nil, msg)
		}
	}
	h.startRender(f, ev.Lab)
}

// startOver forgets what the hub followed of every lab, events having been
// lost (it fell behind, or another process's went unheard), and renders
// every open page whole; h.mu is held.
func (h *Hub) startOver() {
	for lab, f := range h.labs {
		f.waiting, f.flying = views.Msg{}, nil
		h.startRender(f, lab)
	}
}

// startRender starts the lab's render for its open pages, or asks the
// running one to go again; h.mu is held.
func (h *Hub) startRender(f *labFeed, lab string) {
	if len(f.streams) == 0 {
		return // no page to update: a page opened later renders itself
	}
	if f.rendering {
		f.again = true
		return
	}
	f.rendering = true
	h.wg.Add(1)
	go h.render(lab)
}

// refresh renders the lab again for its open pages, without an event: after
// an htmx action has sent its own answer, whose regions were read before
// what the action set going (an email, a redelivery) had finished, so that
// every page ends on the lab's latest state, never on that answer's.
func (h *Hub) refresh(lab string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f, ok := h.labs[lab]; ok {
		h.startRender(f, lab)
	}
}

// subscribe opens a stream of the lab for the client address; the returned
// function closes it. An open page holds its lab (labs.Lab.Hold): the lab
// is in use, never removed as idle while it is watched. Past the server's
// limit it answers EBusy, past the client's share ELimited.
func (h *Hub) subscribe(l *labs.Lab, lang views.Lang, client string) (*stream, func(), error) {
	s := &stream{lang: lang, wake: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streams >= h.max {
		return nil, nil, sim.Busy("max-streams", 5*time.Second, "max-streams", h.max)
	}
	if h.clients[client] >= h.share {
		return nil, nil, sim.Limited("streams-per-address", 5*time.Second, "streams-per-address", h.share)
	}
	h.streams++
	h.clients[client]++
	release := l.Hold()
	f := h.feed(l.ID)
	f.streams[s] = struct{}{}
	return s, func() {
		release()
		h.mu.Lock()
		defer h.mu.Unlock()
		h.streams--
		if h.clients[client]--; h.clients[client] <= 0 {
			delete(h.clients, client)
		}
		if f, ok := h.labs[l.ID]; ok {
			delete(f.streams, s)
		}
	}, nil
}

// sweep lets go of the feeds of labs with no page open and no event for
// feedIdle, until the hub closes: a server that has served a million labs
// holds no more than one that served ten.
func (h *Hub) sweep() {
	defer h.wg.Done()
	t := h.clock.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-h.closed:
			return
		case <-t.C():
		}
		h.mu.Lock()
		for lab, f := range h.labs {
			if len(f.streams) == 0 && !f.rendering && h.clock.Now().Sub(f.last) > feedIdle {
				delete(h.labs, lab)
			}
		}
		h.mu.Unlock()
	}
}
