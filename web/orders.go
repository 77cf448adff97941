package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/orders"
)

// orderBody is PUT's body: the order's new state.
type orderBody struct {
	Amount *int64 `json:"amount"`
}

// handlePutOrder sets an order → 201 when it was created, 200 when it was
// there: PUT is idempotent, the state after two is the state after one.
func handlePutOrder(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body orderBody
		if err := decodeJSON(c, &body, false); err != nil {
			return err
		}
		if body.Amount == nil {
			return sim.Invalid(sim.Broke("amount", "required"))
		}
		o, created, err := h.Orders.Put(c.Request().Context(), labOf(c), sender(c), c.Param("order"), *body.Amount)
		if err != nil {
			return err
		}
		status := http.StatusOK
		if created {
			status = http.StatusCreated
		}
		return c.JSON(status, o)
	}
}

// handleDeleteOrder removes an order → 204, or 404 when there is none: the
// answer differs the second time, the state does not.
func handleDeleteOrder(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := h.Orders.Delete(c.Request().Context(), labOf(c), sender(c), c.Param("order")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// sender tells the lab's own client (its requests carry Idemlab-Attempt)
// from someone sending straight to the API, whose changes the lab's
// scenario records, as it does their charges.
func sender(c echo.Context) orders.Sender {
	if c.Request().Header.Get(api.HeaderAttempt) == "" {
		return orders.Direct
	}
	return orders.ByClient
}

// handleOrders lists the lab's orders.
func handleOrders(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var fs []sim.FieldError
		limit := intParam(c, "limit", 100, 1, 1000, &fs)
		if len(fs) > 0 {
			return sim.Invalid(fs...)
		}
		os, count, err := h.Orders.List(c.Request().Context(), labOf(c), limit)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, struct {
			Orders []sim.Order `json:"orders"`
			Count  int64       `json:"count"`
		}{os, count})
	}
}
