package web

import (
	"bytes"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"idemlab/sim/house"
	"idemlab/views"
)

// sseHeartbeat keeps idle streams open through proxies and notices gone clients.
const sseHeartbeat = 15 * time.Second

// handleEvents streams the lab's changes as Server-Sent Events. A new stream
// first gets the whole current state, so a page that reconnects (after a
// restart of the server, say) catches up at once.
func handleEvents(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		l, err := h.Labs.Lab(ctx, c.Param("lab"))
		if err != nil {
			return err
		}
		lang := views.LangOf(ctx)
		s, unsubscribe, err := hub.subscribe(l, lang, clientOf(c))
		if err != nil {
			return err
		}
		defer unsubscribe()
		first, err := hub.partials(ctx, l.ID, []views.Lang{lang})
		if err != nil {
			return err
		}
		hd := c.Response().Header()
		hd.Set(echo.HeaderContentType, "text/event-stream")
		hd.Set("Cache-Control", "no-store")
		hd.Set("X-Accel-Buffering", "no")
		c.Response().WriteHeader(http.StatusOK)
		var buf bytes.Buffer
		write := func(event string, data []byte) error {
			buf.Reset()
			sseData(&buf, event, data)
			if _, err := c.Response().Write(buf.Bytes()); err != nil {
				return err
			}
			c.Response().Flush()
			return nil
		}
		c.Response().Write([]byte("retry: 1000\n\n"))
		if err := write("", first[0]); err != nil {
			return nil
		}
		tick := h.Clock.NewTicker(sseHeartbeat)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-hub.closed:
				return nil
			case <-s.wake:
				swap, sets, gone := s.take()
				if gone { // the lab was removed: the page is told, and the stream ends for good
					var notice bytes.Buffer
					if err := views.LabGone().Render(ctx, &notice); err == nil && write("", notice.Bytes()) == nil {
						write("gone", nil)
					}
					return nil
				}
				if sets != nil {
					if err := write("settings", sets); err != nil {
						return nil
					}
				}
				if swap != nil {
					if err := write("", swap); err != nil {
						return nil
					}
				}
			case <-tick.C():
				if _, err := c.Response().Write([]byte(": keep-alive\n\n")); err != nil {
					return nil
				}
				c.Response().Flush()
			}
		}
	}
}
