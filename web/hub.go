package web

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"idemlab/sim"
	"idemlab/sim/events"
	"idemlab/sim/house"
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
	sub   *events.Sub // the labs' events, read by one goroutine of the hub's
	log   *slog.Logger
	max   int // streams at most, across all labs

	mu      sync.Mutex
	labs    map[string]*labFeed
	streams int
	closed  chan struct{}
	wg      sync.WaitGroup // renders and the sweeper
	slots   chan struct{}  // renders running
}

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

// hubBuffer is how many events the hub may fall behind by before it
// starts over: every page of every lab re-rendered whole.
const hubBuffer = 4096

// NewHub returns a hub over the labs' events; Close stops it and ends
// every stream. max bounds the streams open at once.
func NewHub(hs *house.House, logger *slog.Logger, max int) *Hub {
	h := &Hub{house: hs, sub: hs.Bus.Subscribe(hubBuffer), log: logger, max: max, labs: map[string]*labFeed{},
		closed: make(chan struct{}), slots: make(chan struct{}, renderAtOnce)}
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
		case ev := <-h.sub.Events():
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
		f = &labFeed{streams: map[*stream]struct{}{}, last: time.Now()}
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
	f.last = time.Now()
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
	for _, text := range describe(ev, f.settings) {
		f.log.add(views.LogLine{At: ev.At.Format("15:04:05.000"), Kind: text.kind, Msg: text.msg})
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

func retryProgress(r *sim.RetryWait) views.Msg {
	switch {
	case r == nil:
		return views.Msg{}
	case r.Busy:
		return views.M("log.progress.busy", r.Next, r.Of)
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

// snapshot returns the lab's log and progress for a page.
func (h *Hub) snapshot(lab string) ([]views.LogLine, views.Msg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.labs[lab]
	if !ok {
		return nil, views.Msg{}
	}
	return f.log.newestFirst(), f.progress()
}

// render renders the lab for its streams, once per language, after the
// gathering window, and again as long as something changed meanwhile.
func (h *Hub) render(lab string) {
	defer h.wg.Done()
	for {
		select {
		case <-h.closed:
			return
		case <-time.After(coalesce):
		}
		select {
		case <-h.closed:
			return
		case h.slots <- struct{}{}:
		}
		h.mu.Lock()
		f, ok := h.labs[lab]
		var langs []views.Lang
		if ok {
			f.again = false
			seen := map[views.Lang]bool{}
			for s := range f.streams {
				if !seen[s.lang] {
					seen[s.lang] = true
					langs = append(langs, s.lang)
				}
			}
		}
		h.mu.Unlock()
		for _, lang := range langs {
			data, err := h.partials(context.Background(), lab, lang)
			if err != nil {
				if sim.ErrorCode(err) != sim.ENotFound {
					h.log.Warn("render lab for streams", "lab", lab, "err", err)
				}
				continue
			}
			h.broadcast(lab, lang, data)
		}
		<-h.slots
		h.mu.Lock()
		f, ok = h.labs[lab]
		if !ok || !f.again || len(f.streams) == 0 {
			if ok {
				f.rendering, f.again = false, false
			}
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
	}
}

// partials renders the lab's live regions in a language.
func (h *Hub) partials(ctx context.Context, lab string, lang views.Lang) ([]byte, error) {
	ctx = views.WithLang(ctx, lang)
	l, err := h.house.Labs.Lab(ctx, lab)
	if err != nil {
		return nil, err
	}
	p, err := labPage(ctx, h.house, h, l)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := views.Partials(p).Render(ctx, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (h *Hub) broadcast(lab string, lang views.Lang, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ok := h.labs[lab]
	if !ok {
		return
	}
	for s := range f.streams {
		if s.lang == lang {
			s.put(data, nil)
		}
	}
}

// subscribe opens a stream of the lab; the returned function closes it.
// Past the server's limit it answers EBusy.
func (h *Hub) subscribe(lab string, lang views.Lang) (*stream, func(), error) {
	s := &stream{lang: lang, wake: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streams >= h.max {
		return nil, nil, sim.Busy("max-streams", 5*time.Second, "The server has as many live pages open as it may (%d); the page will try again.", h.max)
	}
	h.streams++
	f := h.feed(lab)
	f.streams[s] = struct{}{}
	return s, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.streams--
		if f, ok := h.labs[lab]; ok {
			delete(f.streams, s)
		}
	}, nil
}

// sweep lets go of the feeds of labs with no page open and no event for
// feedIdle, until the hub closes: a server that has served a million labs
// holds no more than one that served ten.
func (h *Hub) sweep() {
	defer h.wg.Done()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-h.closed:
			return
		case <-t.C:
		}
		h.mu.Lock()
		for lab, f := range h.labs {
			if len(f.streams) == 0 && !f.rendering && time.Since(f.last) > feedIdle {
				delete(h.labs, lab)
			}
		}
		h.mu.Unlock()
	}
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
// however long the log has run.
type logRing struct {
	lines [logKeep]views.LogLine
	next  int // where the next line goes
	n     int // lines held
}

func (r *logRing) add(line views.LogLine) {
	r.lines[r.next] = line
	r.next = (r.next + 1) % logKeep
	r.n = min(r.n+1, logKeep)
}

// newestFirst returns a copy of the lines held, the newest first.
func (r *logRing) newestFirst() []views.LogLine {
	out := make([]views.LogLine, r.n)
	for i := range out {
		out[i] = r.lines[(r.next-1-i+2*logKeep)%logKeep]
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
