package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/scenario"
)

// scenarioPath is the address that rebuilds a lab from its scenario code.
func scenarioPath(code string) string { return "/s/" + code }

// handleScenarioAPI gives the lab's scenario code and the address that
// rebuilds it.
func handleScenarioAPI(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		code, actions, ok, err := h.Scenarios.Code(c.Request().Context(), labOf(c))
		if err != nil {
			return err
		}
		out := map[string]any{"code": nil, "url": nil, "actions": actions, "max_actions": sim.MaxScenarioActions}
		if ok {
			out["code"], out["url"] = code, scenarioPath(code)
		}
		return c.JSON(http.StatusOK, out)
	}
}

// handleScenario builds a new lab of the opener's own from a scenario code,
// whole, and sends the browser to it. Every opener gets a lab of their own,
// and rebuilds of different links never wait on each other.
func handleScenario(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc, err := scenario.Decode(c.Param("code"))
		if err != nil {
			return err
		}
		l, err := h.Scenarios.Open(c.Request().Context(), sc)
		if err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, labBase(l.ID))
	}
}
