package web

import (
	"net/http"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/house"
)

func handlePayments(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var fs []sim.FieldError
		limit := intParam(c, "limit", 100, 1, 1000, &fs)
		offset := intParam(c, "offset", 0, 0, 1<<31-1, &fs)
		if len(fs) > 0 {
			return sim.Invalid(fs...)
		}
		ctx, l := c.Request().Context(), labOf(c)
		t, err := h.Ledger.Totals(ctx, l)
		if err != nil {
			return err
		}
		ps, err := h.Ledger.Payments(ctx, l, limit, offset)
		if err != nil {
			return err
		}
		count, total := t.Payments, t.Total
		return c.JSON(http.StatusOK, struct {
			Payments []sim.Payment `json:"payments"`
			Count    int64         `json:"count"` // of the whole ledger
			Total    int64         `json:"total"` // sum of the whole ledger
		}{ps, count, total})
	}
}

func handlePayment(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := strconv.ParseInt(c.Param("id"), 10, 64)
		if err != nil {
			return sim.Errorf(sim.ENotFound, "There is no payment %q in this lab.", c.Param("id"))
		}
		p, err := h.Ledger.Payment(c.Request().Context(), labOf(c), id)
		if err != nil {
			return err
		}
		b, err := json.Marshal(p) // the same bytes as the charge's 201 answer
		if err != nil {
			return err
		}
		return c.JSONBlob(http.StatusOK, b)
	}
}

func handleOperations(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var fs []sim.FieldError
		limit := intParam(c, "limit", 20, 1, 100, &fs)
		if len(fs) > 0 {
			return sim.Invalid(fs...)
		}
		ops, err := h.Client.Operations(c.Request().Context(), labOf(c), limit)
		if err != nil {
			return err
		}
		if ops == nil {
			ops = []sim.Operation{}
		}
		return c.JSON(http.StatusOK, map[string]any{"operations": ops})
	}
}

func handleStartOperation(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body struct {
			OrderID *string  `json:"order_id"`
			Amount  *int64   `json:"amount"` // none for a DELETE
			Fate    sim.Fate `json:"fate"`
			Method  string   `json:"method"` // POST (default), PUT, DELETE
		}
		if err := decodeJSON(c, &body, false); err != nil {
			return err
		}
		r := sim.OperationRequest{Fate: body.Fate, Method: body.Method}
		if body.Method == sim.MethodDelete && body.Amount == nil { // a DELETE has no amount
			if body.OrderID == nil {
				return sim.Invalid(sim.Broke("order_id", "required"))
			}
			r.OrderID = *body.OrderID
		} else {
			ch, err := chargeBody{OrderID: body.OrderID, Amount: body.Amount}.charge()
			if err != nil {
				return err
			}
			r.OrderID, r.Amount = ch.OrderID, ch.Amount
		}
		l := labOf(c)
		op, err := h.Client.Start(c.Request().Context(), l, r)
		if err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderLocation, "/api/v1/labs/"+l.ID+"/operations/"+op.ID)
		return c.JSON(http.StatusCreated, op)
	}
}

func handleOperation(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		op, err := h.Client.Operation(c.Request().Context(), labOf(c), c.Param("op"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, op)
	}
}

func handleRetry(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		body := struct {
			WithKey *bool    `json:"with_key"`
			Fate    sim.Fate `json:"fate"`
		}{}
		if err := decodeJSON(c, &body, true); err != nil {
			return err
		}
		withKey := body.WithKey == nil || *body.WithKey
		op, err := h.Client.Retry(c.Request().Context(), labOf(c), c.Param("op"), withKey, body.Fate)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, op)
	}
}

func handleRace(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body struct {
			Parallel *int `json:"parallel"`
		}
		if err := decodeJSON(c, &body, false); err != nil {
			return err
		}
		if body.Parallel == nil {
			return sim.Invalid(sim.Broke("parallel", "required"))
		}
		op, err := h.Client.Race(c.Request().Context(), labOf(c), c.Param("op"), *body.Parallel)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, op)
	}
}

func handleReset(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := h.Labs.Reset(c.Request().Context(), labOf(c)); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}
