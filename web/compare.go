package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/views"
)

// handleCompareAPI runs the default script side by side → 200 the cells.
func handleCompareAPI(engine *sim.Engine) echo.HandlerFunc {
	return func(c echo.Context) error {
		cells, err := engine.Compare(c.Request().Context(), sim.DefaultScript())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, map[string]any{"script": scriptView(sim.DefaultScript()), "cells": cells})
	}
}

func scriptView(s sim.Script) map[string]any {
	return map[string]any{"order_id": s.OrderID, "amount": s.Amount, "purchases": s.Purchases, "steps": s.Steps}
}

// handleCompare is the page of the side-by-side comparison.
func handleCompare(engine *sim.Engine) echo.HandlerFunc {
	return func(c echo.Context) error {
		script := sim.DefaultScript()
		cells, err := engine.Compare(c.Request().Context(), script)
		if err != nil {
			return err
		}
		v := views.Comparison{Protections: sim.Names(sim.Protections), Keys: sim.Names(sim.KeyStrategies),
			Amount: script.Amount, Total: script.Amount * script.Purchases}
		for _, cell := range cells {
			v.Cells = append(v.Cells, views.CompareCell{Protection: string(cell.Protection), KeyStrategy: string(cell.KeyStrategy),
				Lab: cell.Lab, Count: cell.Count, Total: cell.Total, Purchases: cell.Purchases})
		}
		return render(c, http.StatusOK, views.ComparePage(v))
	}
}
