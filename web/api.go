package web

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/labs"
)

const labKey = "lab"

// withLab loads the lab named by the :lab path parameter, or answers 404.
func withLab(h *house.House) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			l, err := h.Labs.Lab(c.Request().Context(), c.Param("lab"))
			if err != nil {
				return err
			}
			c.Set(labKey, l)
			return next(c)
		}
	}
}

func labOf(c echo.Context) *labs.Lab { return c.Get(labKey).(*labs.Lab) }

// healthWait is how long /healthz waits for the ledger to take its write.
const healthWait = 2 * time.Second

// health is the answer of /healthz: each part the lab runs, "ok" or
// "down" (database: the ledger can be written; kv: Redis; broker: NATS).
type health struct {
	Status string            `json:"status"` // ok, unavailable
	Detail string            `json:"detail,omitempty"`
	Parts  map[string]string `json:"parts"`
	// Leads, on PostgreSQL: whether this process is the one of the
	// database's that relays the queue and expires keys and labs.
	Leads *bool `json:"leads,omitempty"`
}

// handleHealth answers 200 when the ledger can be written now and every
// part the lab runs answers, 503 when not (a full disk, a writer stuck, a
// database, Redis or broker down), naming the parts down: what a load
// balancer needs to know; on PostgreSQL, whether this process leads, what
// an operator of several needs to know. The checks run side by side,
// within healthWait.
func handleHealth(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), healthWait)
		defer cancel()
		parts := make(chan map[string]bool, 1)
		go func() { parts <- h.Parts(ctx) }()
		out := health{Status: "ok", Parts: map[string]string{sim.PartDatabase: "ok"}}
		if err := h.Health(ctx); err != nil {
			out.Parts[sim.PartDatabase], out.Detail = "down", "The ledger cannot be written."
		}
		for part, ok := range <-parts {
			out.Parts[part] = "ok"
			if !ok {
				out.Parts[part] = "down"
			}
		}
		if h.Store.Postgres() {
			leads := h.Store.Lead(ctx)
			out.Leads = &leads
		}
		for _, st := range out.Parts {
			if st == "down" {
				out.Status = "unavailable"
			}
		}
		if out.Status != "ok" {
			c.Response().Header().Set("Retry-After", "5")
			return c.JSON(http.StatusServiceUnavailable, out)
		}
		return c.JSON(http.StatusOK, out)
	}
}

// handleDeleteLab removes a private lab and everything in it.
func handleDeleteLab(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := h.Labs.Delete(c.Request().Context(), c.Param("lab")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

func handleCreateLab(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := h.Labs.CreatePrivate(c.Request().Context())
		if err != nil {
			return err
		}
		url := "/labs/" + l.ID
		c.Response().Header().Set(echo.HeaderLocation, url)
		return c.JSON(http.StatusCreated, map[string]string{"id": l.ID, "url": url})
	}
}

func handleGetSettings() echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.JSON(http.StatusOK, labOf(c).Settings())
	}
}

func handlePatchSettings(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var p sim.SettingsPatch
		if err := decodePatch(c, &p); err != nil {
			return err
		}
		if err := h.Stepped.Holding(labOf(c)); err != nil {
			return err
		}
		s, err := h.Labs.UpdateSettings(c.Request().Context(), labOf(c), p)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, s)
	}
}
