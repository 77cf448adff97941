package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/compare"
	"idemlab/sim/house"
	"idemlab/views"
)

// comparePath is the address of a comparison's page.
func comparePath(id string) string { return "/compare/" + id }

// cellJSON is a cell of a comparison as the API shows it: its results and
// the link that rebuilds its lab for whoever opens it (null when there is
// none). No lab id: the comparison is shared, its labs are not.
type cellJSON struct {
	compare.Cell
	ScenarioURL *string `json:"scenario_url"`
}

// mailCellJSON is a cell of the second grid as the API shows it.
type mailCellJSON struct {
	compare.MailCell
	ScenarioURL *string `json:"scenario_url"`
}

// scenarioURL is the link of a scenario code, or nil for none.
func scenarioURL(code string) *string {
	if code == "" {
		return nil
	}
	u := scenarioPath(code)
	return &u
}

// compareJSON is a comparison as the API shows it.
func compareJSON(c compare.Comparison) map[string]any {
	cells, mail := []cellJSON{}, []mailCellJSON{}
	for _, x := range c.Cells {
		cells = append(cells, cellJSON{x, scenarioURL(x.Scenario)})
	}
	for _, x := range c.MailCells {
		mail = append(mail, mailCellJSON{x, scenarioURL(x.Scenario)})
	}
	return map[string]any{"id": c.ID, "url": comparePath(c.ID), "created_at": c.CreatedAt,
		"script": scriptView(c.Script), "cells": cells, "mail_cells": mail}
}

// handleCompareAPI runs the default script side by side → 200 the cells;
// Location is where the run stays to be read again.
func handleCompareAPI(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		cmp, err := h.Compare.Run(c.Request().Context(), sim.DefaultScript())
		if err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderLocation, "/api/v1/compare/"+cmp.ID)
		return c.JSON(http.StatusOK, compareJSON(cmp))
	}
}

// handleComparisonAPI reads a comparison made before.
func handleComparisonAPI(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		cmp, err := h.Compare.Get(c.Request().Context(), c.Param("id"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, compareJSON(cmp))
	}
}

func scriptView(s sim.Script) map[string]any {
	return map[string]any{"order_id": s.OrderID, "amount": s.Amount, "purchases": s.Purchases, "steps": s.Steps}
}

// handleCompare runs the comparison for the page's button and sends the
// browser to the run's own address (303): reloaded or shared, the page
// shows the same run and runs nothing again.
func handleCompare(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		cmp, err := h.Compare.Run(c.Request().Context(), sim.DefaultScript())
		if err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, comparePath(cmp.ID))
	}
}

// link is the scenario link of a cell, or "" for none.
func link(code string) string {
	if code == "" {
		return ""
	}
	return scenarioPath(code)
}

// handleCompareStart is the page at the Compare button's own address: a
// reader who types it, or reloads after the button, gets the button, not a
// "method not allowed".
func handleCompareStart() echo.HandlerFunc {
	return func(c echo.Context) error {
		return render(c, http.StatusOK, views.CompareStart())
	}
}

// handleComparePage is the page of a comparison made before.
func handleComparePage(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		cmp, err := h.Compare.Get(c.Request().Context(), c.Param("id"))
		if err != nil {
			return err
		}
		script := cmp.Script
		v := views.Comparison{Protections: sim.Names(sim.Protections), Keys: sim.Names(sim.KeyStrategies),
			Amount: script.Amount, Total: script.Amount * script.Purchases, Self: comparePath(cmp.ID)}
		for _, cell := range cmp.Cells {
			v.Cells = append(v.Cells, views.CompareCell{Protection: string(cell.Protection), KeyStrategy: string(cell.KeyStrategy),
				Link: link(cell.Scenario), Count: cell.Count, Total: cell.Total, Purchases: cell.Purchases, Cause: cell.Cause})
		}
		if len(cmp.MailCells) > 0 {
			v.Dedups, v.Fates = sim.Names(sim.ConsumerDedups), sim.Names(sim.MessageFates)
			for _, m := range cmp.MailCells {
				v.MailCells = append(v.MailCells, views.MailCell{Dedup: string(m.Dedup), Fate: string(m.Delivery), Link: link(m.Scenario),
					Emails: m.Emails, Purchases: m.Purchases, Cause: m.Cause})
			}
		}
		return render(c, http.StatusOK, views.ComparePage(v))
	}
}
