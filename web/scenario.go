package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
)

// scenarioPath is the address that rebuilds a lab from its scenario code.
func scenarioPath(code string) string { return "/s/" + code }

// handleScenarioAPI gives the lab's scenario code and the address that
// rebuilds it.
func handleScenarioAPI(engine *sim.Engine) echo.HandlerFunc {
	return func(c echo.Context) error {
		code, actions, ok, err := engine.ScenarioCode(c.Request().Context(), labOf(c))
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
func handleScenario(engine *sim.Engine) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc, err := sim.DecodeScenario(c.Param("code"))
		if err != nil {
			return err
		}
		l, err := engine.OpenScenario(c.Request().Context(), sc)
		if err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, labBase(l.ID))
	}
}
