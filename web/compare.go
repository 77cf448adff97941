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

// compareJSON is a comparison as the API shows it.
func compareJSON(c compare.Comparison) map[string]any {
	mail := c.MailCells
	if mail == nil {
		mail = []compare.MailCell{}
	}
	return map[string]any{"id": c.ID, "url": comparePath(c.ID), "created_at": c.CreatedAt,
		"script": scriptView(c.Script), "cells": c.Cells, "mail_cells": mail}
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
				Lab: cell.Lab, Count: cell.Count, Total: cell.Total, Purchases: cell.Purchases, Cause: cell.Cause})
		}
		if len(cmp.MailCells) > 0 {
			v.Dedups, v.Fates = sim.Names(sim.ConsumerDedups), sim.Names(sim.MessageFates)
			for _, m := range cmp.MailCells {
				v.MailCells = append(v.MailCells, views.MailCell{Dedup: string(m.Dedup), Fate: string(m.Delivery), Lab: m.Lab,
					Emails: m.Emails, Purchases: m.Purchases, Cause: m.Cause})
			}
		}
		return render(c, http.StatusOK, views.ComparePage(v))
	}
}
