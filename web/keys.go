package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/idempotency"
	"idemlab/sim/labs"
	"idemlab/views"
)

// pageKeys is how many keys of each kind the keys panel and the API list.
const pageKeys = 50

// clockBody is the body of POST …/clock.
type clockBody struct {
	AdvanceS *int64 `json:"advance_s"`
}

// handleClock moves the lab's clock forward for expiry: the replay
// records' TTL and lock, and the key-value store's keys.
func handleClock(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body clockBody
		if err := decodeJSON(c, &body, false); err != nil {
			return err
		}
		if body.AdvanceS == nil {
			return sim.Invalid(sim.Broke("advance_s", "required"))
		}
		now, err := h.Keys.Advance(c.Request().Context(), labOf(c), *body.AdvanceS)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, struct {
			Now string `json:"now"`
		}{now.UTC().Format(time.RFC3339)})
	}
}

// keyJSON is one idempotency key as the API lists it.
type keyJSON struct {
	Key    string `json:"key"`
	Store  string `json:"store"` // where it really lives: sqlite, postgres (the lab's database) or redis
	State  string `json:"state"`
	TTLMS  *int64 `json:"ttl_ms"`            // null: it never expires
	LockMS *int64 `json:"lock_ms,omitempty"` // in flight: until another request may take it over
}

func millis(d *time.Duration) *int64 {
	if d == nil {
		return nil
	}
	ms := d.Milliseconds()
	return &ms
}

// handleKeys lists where the lab's idempotency keys live, their state and
// the time each has left on the lab's clock.
func handleKeys(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		l := labOf(c)
		ks, err := h.Keys.List(c.Request().Context(), l, pageKeys, 0)
		if err != nil && !errors.Is(err, idempotency.ErrKVDown) {
			return err
		}
		out := make([]keyJSON, len(ks))
		for i, k := range ks {
			out[i] = keyJSON{Key: k.Key, Store: k.Store, State: k.State, TTLMS: millis(k.TTL), LockMS: millis(k.Lock)}
		}
		return c.JSON(http.StatusOK, struct {
			Keys   []keyJSON `json:"keys"`
			Now    string    `json:"now"`     // the lab's clock
			KVDown bool      `json:"kv_down"` // the key-value store did not answer: its keys are not listed
		}{out, h.Keys.Now(l).UTC().Format(time.RFC3339), err != nil})
	}
}

// kvWait is how long a page waits for the key-value store's keys: a store
// that does not answer costs a page no more than this. It is long enough
// for a store that is only slow (a busy machine) not to be said to be down
// and its keys shown gone: 300 ms was not, under load.
const kvWait = 2 * time.Second

// keysView is the keys panel of the lab's page.
func keysView(ctx context.Context, h *house.House, l *labs.Lab) (views.KeysView, error) {
	v := views.KeysView{Clock: int64(l.Clock() / time.Second)}
	ks, err := h.Keys.List(ctx, l, pageKeys, kvWait)
	if err != nil && !errors.Is(err, idempotency.ErrKVDown) {
		return v, err
	}
	v.KVDown = err != nil
	for _, k := range ks {
		r := views.KeyRow{Key: k.Key, Store: k.Store, State: k.State, TTLMS: -1}
		if k.TTL != nil {
			r.TTLMS = k.TTL.Milliseconds()
		}
		if k.Lock != nil {
			r.LockMS = k.Lock.Milliseconds()
		}
		v.Rows = append(v.Rows, r)
	}
	return v, nil
}

// handleClockForm is the page's "advance the clock" button.
func handleClockForm(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		s, err := strconv.ParseInt(c.FormValue("advance_s"), 10, 64)
		if err != nil {
			s = 0 // not a number: refused by name, as out of range
		}
		if _, err := h.Keys.Advance(c.Request().Context(), l, s); err != nil {
			if sim.ErrorCode(err) == sim.EUnavailable {
				return err // Redis down is not the person's doing: its 503 and Retry-After
			}
			return refuseErr(c, err)
		}
		return answer(c, h, hub, l)
	}
}
