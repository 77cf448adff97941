package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim/client/storm"
	"idemlab/sim/house"
)

// handleStormStart starts a storm in the lab (POST …/storms).
func handleStormStart(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var r storm.Request
		if err := decodeJSON(c, &r, false); err != nil {
			return err
		}
		l := labOf(c)
		st, err := h.Storms.Start(l, r)
		if err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderLocation, api.StormPath(l.ID, st.ID))
		return c.JSON(http.StatusCreated, st.View())
	}
}

// handleStormGet is a storm's series and summary so far (GET …/storms/{id}).
func handleStormGet(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		st, err := h.Storms.Get(labOf(c).ID, c.Param("storm"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, st.View())
	}
}
