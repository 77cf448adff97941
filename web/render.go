package web

import (
	"bytes"
	"context"
	"time"

	"idemlab/sim"
	"idemlab/views"
)

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

// stormCoalesce is the gathering window of a lab whose storm runs: its
// thousands of charges a second draw its pages four times a second.
const stormCoalesce = 250 * time.Millisecond

// window is how long the lab's render gathers its events.
func (h *Hub) window(lab string) time.Duration {
	if h.house.Storms.Running(lab) {
		return stormCoalesce
	}
	return coalesce
}

// render renders the lab for its streams, once per language, after the
// gathering window, and again as long as something changed meanwhile.
func (h *Hub) render(lab string) {
	defer h.wg.Done()
	for {
		select {
		case <-h.closed:
			return
		case <-h.clock.NewTimer(h.window(lab)).C():
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
		if len(langs) > 0 {
			pages, err := h.partials(context.Background(), lab, langs)
			if err != nil && sim.ErrorCode(err) != sim.ENotFound {
				h.log.Warn("render lab for streams", "lab", lab, "err", err)
			}
			for i, data := range pages {
				h.broadcast(lab, langs[i], data)
			}
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

// partials renders the lab's live regions in each of the languages, from
// one read of the lab: what a page shows does not depend on its language,
// only its words do.
func (h *Hub) partials(ctx context.Context, lab string, langs []views.Lang) ([][]byte, error) {
	l, err := h.house.Labs.Lab(ctx, lab)
	if err != nil {
		return nil, err
	}
	p, err := labPage(ctx, h.house, h, l, "")
	if err != nil {
		return nil, err
	}
	pages := make([][]byte, len(langs))
	for i, lang := range langs {
		var buf bytes.Buffer
		if err := views.Partials(p).Render(views.WithLang(ctx, lang), &buf); err != nil {
			return nil, err
		}
		pages[i] = buf.Bytes()
	}
	return pages, nil
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
