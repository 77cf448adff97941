package web

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/views"
)

// compareCell is one lab of the side-by-side comparison.
type compareCell struct {
	Protection  sim.Protection  `json:"protection"`
	KeyStrategy sim.KeyStrategy `json:"key_strategy"`
	Lab         string          `json:"lab"`
	Count       int64           `json:"count"`
	Total       int64           `json:"total"`
	Purchases   int64           `json:"purchases"` // what the script meant to charge
}

// compare runs the script against every protection × key strategy, each in
// a throwaway lab of its own, a few labs at a time.
func compare(ctx context.Context, engine *sim.Engine, script sim.Script) ([]compareCell, error) {
	var cells []compareCell
	for _, k := range sim.KeyStrategies {
		for _, p := range sim.Protections {
			cells = append(cells, compareCell{Protection: p, KeyStrategy: k, Purchases: script.Purchases})
		}
	}
	var (
		wg    sync.WaitGroup
		errs  = make([]error, len(cells))
		slots = make(chan struct{}, 4)
	)
	for i := range cells {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			errs[i] = runCell(ctx, engine, script, &cells[i])
		})
	}
	wg.Wait()
	return cells, errors.Join(errs...)
}

func runCell(ctx context.Context, engine *sim.Engine, script sim.Script, c *compareCell) error {
	l, err := engine.CreateLab(ctx)
	if err != nil {
		return err
	}
	c.Lab = l.ID
	ok, manual := sim.FateOK, sim.RetryManual
	if _, err := engine.UpdateSettings(ctx, l, sim.SettingsPatch{Protection: &c.Protection, KeyStrategy: &c.KeyStrategy,
		Network: &ok, Retry: &sim.RetryPatch{Mode: &manual}}); err != nil {
		return err
	}
	if err := engine.RunScript(ctx, l, script); err != nil {
		return err
	}
	_, c.Count, c.Total, err = engine.Payments(ctx, l, 1, 0)
	return err
}

// handleCompareAPI runs the default script side by side → 200 the cells.
func handleCompareAPI(engine *sim.Engine) echo.HandlerFunc {
	return func(c echo.Context) error {
		cells, err := compare(c.Request().Context(), engine, sim.DefaultScript())
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
		cells, err := compare(c.Request().Context(), engine, script)
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
