package web

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"strconv"

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

// handleStormCSV is a storm's series as CSV, a row a tenth of a second
// (GET …/storms/{id}/series.csv), to draw it elsewhere.
func handleStormCSV(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		st, err := h.Storms.Get(labOf(c).ID, c.Param("storm"))
		if err != nil {
			return err
		}
		v := st.View()
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.Write([]string{"t_ms", "first_tries", "retries", "admitted", "unavailable", "down", "successes", "duplicates_stopped", "double_charges"})
		for i, b := range v.Series {
			row := []int{i * int(v.StepMS), b.First, b.Retries, b.Admitted, b.Busy, b.Down, b.Successes, b.DupStopped, b.Doubles}
			cells := make([]string, len(row))
			for j, n := range row {
				cells[j] = strconv.Itoa(n)
			}
			w.Write(cells)
		}
		w.Flush()
		download(c, "storm-"+v.ID+".csv")
		return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
	}
}

// handleStormStop stops a storm (DELETE …/storms/{id}): 204 once its
// clients have ended, whether it ran or was done already.
func handleStormStop(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := h.Storms.Stop(c.Request().Context(), labOf(c).ID, c.Param("storm")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
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
