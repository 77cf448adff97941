package web

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/labs"
)

// handleSteppedStart begins a stepped race in the lab: its racers stop at
// their first points.
func handleSteppedStart(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body struct {
			Racers  *int    `json:"racers"`
			OrderID *string `json:"order_id"`
			Amount  *int64  `json:"amount"`
		}
		if err := decodeJSON(c, &body, false); err != nil {
			return err
		}
		n := sim.MinRacers
		if body.Racers != nil {
			n = *body.Racers
		}
		ch, err := chargeBody{OrderID: body.OrderID, Amount: body.Amount}.charge()
		if err != nil {
			return err
		}
		l := labOf(c)
		race, err := h.Stepped.Start(c.Request().Context(), l, ch.OrderID, ch.Amount, n)
		if err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderLocation, api.SteppedPath(l.ID, race.ID))
		return c.JSON(http.StatusCreated, race)
	}
}

// handleSteppedGet answers the lab's stepped race as it stands.
func handleSteppedGet(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		race, err := h.Stepped.Get(labOf(c), c.Param("race"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, race)
	}
}

// handleSteppedStep advances one racer: to its next point, or with
// "to": "end" until its answer.
func handleSteppedStep(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body struct {
			Racer *string `json:"racer"`
			To    string  `json:"to"`
		}
		if err := decodeJSON(c, &body, false); err != nil {
			return err
		}
		if body.Racer == nil {
			return sim.Invalid(sim.Broke("racer", "required"))
		}
		race, err := h.Stepped.Step(c.Request().Context(), labOf(c), c.Param("race"), *body.Racer, body.To)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, race)
	}
}

// handleSteppedRace answers the lab's stepped race (the path's race) once
// do has acted on it: run (every racer goes on without stopping) or abort
// (open transactions roll back).
func handleSteppedRace(do func(ctx context.Context, l *labs.Lab, id string) (sim.SteppedRace, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		race, err := do(c.Request().Context(), labOf(c), c.Param("race"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, race)
	}
}
