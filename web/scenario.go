package web

import (
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
)

// scenarioPath is the address that rebuilds a lab from its scenario code.
func scenarioPath(code string) string { return "/s/" + code }

// handleScenarioAPI gives the lab's scenario code and the address that
// rebuilds it.
func handleScenarioAPI(engine *sim.Engine) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc, err := engine.Scenario(c.Request().Context(), labOf(c))
		if err != nil {
			return err
		}
		out := map[string]any{"code": nil, "url": nil, "actions": len(sc.Actions), "max_actions": sim.MaxScenarioActions}
		if code, ok := engine.ScenarioCode(sc); ok {
			out["code"], out["url"] = code, scenarioPath(code)
		}
		return c.JSON(http.StatusOK, out)
	}
}

// handleScenario rebuilds the lab a scenario code names, once, and sends
// the browser to it. The same code always names the same lab.
func handleScenario(engine *sim.Engine) echo.HandlerFunc {
	var mu sync.Mutex // one rebuild at a time: two browsers opening one link build one lab
	return func(c echo.Context) error {
		sc, err := sim.DecodeScenario(c.Param("code"))
		if err != nil {
			return err
		}
		id := sim.ScenarioLabID(c.Param("code"))
		mu.Lock()
		_, err = engine.Rebuild(c.Request().Context(), id, sc)
		mu.Unlock()
		if err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, labBase(id))
	}
}
