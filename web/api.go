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

// handleHealth answers 200 when the ledger can be written now, 503 when not
// (a full disk, a writer stuck): what a load balancer needs to know.
func handleHealth(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), healthWait)
		defer cancel()
		if err := h.Health(ctx); err != nil {
			c.Response().Header().Set("Retry-After", "5")
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "detail": "The ledger cannot be written."})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
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
		s, err := h.Labs.UpdateSettings(c.Request().Context(), labOf(c), p)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, s)
	}
}
