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
	"idemlab/views"
)

// logKeep is how many event-log lines a lab keeps for new pages.
const logKeep = 60

// coalesce is how long the hub gathers a lab's events before it renders
// them: a race of 64 attempts becomes a few updates, not a hundred.
const coalesce = 25 * time.Millisecond

// Hub fans a lab's changes out to every open page of it over Server-Sent
// Events. Each change renders the lab's regions once; every stream of the
// lab gets the same bytes. A slow stream only ever holds the latest state.
type Hub struct {
	engine *sim.Engine
	log    *slog.Logger

	mu     sync.Mutex
	labs   map[string]*labFeed
	dirty  map[string]bool
	kick   chan struct{}
	closed chan struct{}
	done   chan struct{}
}

// labFeed is one lab's log and streams.
type labFeed struct {
	log      []views.LogLine // newest first
	streams  map[*stream]struct{}
	progress views.Msg
	settings *sim.Settings // last seen, to name what changed
}

// stream is one open page: it holds at most one message, the newest.
type stream struct {
	ch   chan message
	lang views.Lang // the page's language
}

// message is one SSE message: an event name ("" for a swap) and its data.
type message struct {
	event string
	data  []byte
}

// NewHub returns a hub over the engine's events and starts its renderer;
// Close stops it and ends every stream.
func NewHub(engine *sim.Engine, logger *slog.Logger) *Hub {
	h := &Hub{engine: engine, log: logger, labs: map[string]*labFeed{}, dirty: map[string]bool{},
		kick: make(chan struct{}, 1), closed: make(chan struct{}), done: make(chan struct{})}
	engine.Observe(h.notify)
	go h.render()
	return h
}

// Close ends every stream and stops the renderer.
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
	<-h.done
}

func (h *Hub) feed(lab string) *labFeed {
	f, ok := h.labs[lab]
	if !ok {
		f = &labFeed{streams: map[*stream]struct{}{}}
		h.labs[lab] = f
	}
	return f
}

// notify is told of every engine event; it records the log line and marks
// the lab for rendering, without blocking.
func (h *Hub) notify(ev sim.Event) {
	h.mu.Lock()
	f := h.feed(ev.Lab)
	switch ev.Kind {
	case sim.EventReset:
		f.log, f.progress = nil, views.Msg{}
	case sim.EventRetry:
		f.progress = retryProgress(ev.Retry)
	case sim.EventAttempt:
		if ev.Attempt != nil && ev.Attempt.FinishedAt == nil { // the announced attempt has started
			f.progress = views.Msg{}
		}
	}
	var settingsMsg []byte
	if ev.Kind == sim.EventSettings && ev.Settings != nil {
		settingsMsg, _ = json.Marshal(settingsView(*ev.Settings))
	}
	for _, text := range describe(ev, f.settings) {
		line := views.LogLine{At: ev.At.Format("15:04:05.000"), Kind: text.kind, Msg: text.msg}
		f.log = append([]views.LogLine{line}, f.log...)
	}
	if len(f.log) > logKeep {
		f.log = f.log[:logKeep]
	}
	if ev.Kind == sim.EventSettings {
		f.settings = ev.Settings
	}
	if settingsMsg != nil {
		for s := range f.streams {
			s.send(message{event: "settings", data: settingsMsg})
		}
	}
	h.dirty[ev.Lab] = true
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

func retryProgress(r *sim.RetryWait) views.Msg {
	if r == nil {
		return views.Msg{}
	}
	return views.M("log.progress", r.Next, r.Of, r.Delay.Milliseconds())
}

// snapshot returns the lab's log and progress for a page.
func (h *Hub) snapshot(lab string) ([]views.LogLine, views.Msg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.feed(lab)
	return append([]views.LogLine(nil), f.log...), f.progress
}

// render renders each dirty lab that has streams and sends the result to
// all of them, until the hub closes.
func (h *Hub) render() {
	defer close(h.done)
	for {
		select {
		case <-h.closed:
			return
		case <-h.kick:
		}
		select {
		case <-h.closed:
			return
		case <-time.After(coalesce):
		}
		h.mu.Lock()
		type target struct {
			lab  string
			lang views.Lang
		}
		var targets []target
		for lab := range h.dirty {
			seen := map[views.Lang]bool{}
			for s := range h.feed(lab).streams {
				if !seen[s.lang] {
					seen[s.lang] = true
					targets = append(targets, target{lab, s.lang})
				}
			}
		}
		clear(h.dirty)
		h.mu.Unlock()
		for _, t := range targets { // once per lab and language, for all its streams
			data, err := h.partials(context.Background(), t.lab, t.lang)
			if err != nil {
				h.log.Warn("render lab for streams", "lab", t.lab, "err", err)
				continue
			}
			h.broadcast(t.lab, t.lang, message{data: data})
		}
	}
}

// partials renders the lab's live regions in a language.
func (h *Hub) partials(ctx context.Context, lab string, lang views.Lang) ([]byte, error) {
	ctx = views.WithLang(ctx, lang)
	l, err := h.engine.Lab(ctx, lab)
	if err != nil {
		return nil, err
	}
	p, err := labPage(ctx, h.engine, h, l)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := views.Partials(p).Render(ctx, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (h *Hub) broadcast(lab string, lang views.Lang, m message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.feed(lab).streams {
		if s.lang == lang {
			s.send(m)
		}
	}
}

// subscribe opens a stream of the lab; the returned function closes it.
func (h *Hub) subscribe(lab string, lang views.Lang) (*stream, func()) {
	s := &stream{ch: make(chan message, 4), lang: lang}
	h.mu.Lock()
	h.feed(lab).streams[s] = struct{}{}
	h.mu.Unlock()
	return s, func() {
		h.mu.Lock()
		delete(h.feed(lab).streams, s)
		h.mu.Unlock()
	}
}

// send queues m, dropping the oldest queued message when the stream lags:
// every swap message carries the whole state, so only the newest matters.
func (s *stream) send(m message) {
	for {
		select {
		case s.ch <- m:
			return
		default:
		}
		select {
		case <-s.ch:
		default:
		}
	}
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
