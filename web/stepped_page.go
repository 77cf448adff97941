package web

import (
	"context"
	"fmt"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/views"
)

// steppedLessons are the lessons whose page offers a stepped race: the
// race (3), the race in one transaction (13), and the race under a
// microscope (14).
var steppedLessons = map[int]bool{3: true, 13: true, 14: true}

// steppedView is the lab's stepped race as its page shows it: shown while
// one runs, and after its end while the open lesson is about one, which
// offers a new one beside the race button; and its statements for
// the sequence diagram, when the latest operation is the race's.
func steppedView(h *house.House, l *labs.Lab, lesson int, latest string) (views.SteppedView, []views.DiagramStep) {
	race, ok := h.Stepped.Latest(l)
	v := views.SteppedView{Show: ok && (!race.Over || steppedLessons[lesson]), Offer: steppedLessons[lesson] && (!ok || race.Over),
		Postgres: h.Store.Postgres()}
	if !ok {
		return v, nil
	}
	var steps []views.DiagramStep
	if race.Operation == latest {
		for _, e := range race.Log {
			steps = append(steps, views.DiagramStep{Racer: e.Racer, Point: string(e.Point), Result: e.Code,
				Rows: e.RowsFound(), Payment: e.Payment, Waits: e.StepResult.Racer, Postgres: race.Postgres})
		}
	}
	v.ID, v.OrderID, v.Amount, v.Protection, v.Over, v.Aborted = race.ID, race.OrderID, race.Amount, string(race.Protection), race.Over, race.Aborted
	v.Fresh = len(race.Log) == 0
	for _, r := range race.Racers {
		rv := views.RacerView{Name: r.Name, State: r.State, Waits: r.Waits, Outcome: string(r.Outcome), Status: r.Status, GaveUp: r.GaveUp}
		v.Fresh = v.Fresh && r.State == sim.RacerReady
		for _, pt := range r.Points {
			pv := views.PointView{Point: string(pt), Next: r.State != sim.RacerDone && r.Next == pt}
			for _, e := range race.Log {
				if e.Racer == r.Name && e.Point == pt {
					pv.Result, pv.Rows, pv.Payment, pv.Waits = e.Code, e.RowsFound(), e.Payment, e.StepResult.Racer
					pv.Done = e.Code != sim.StepWaits
				}
			}
			rv.Points = append(rv.Points, pv)
		}
		for _, p := range r.Sees {
			rv.Sees = append(rv.Sees, views.SeenPayment{N: p.ID, Amount: p.Amount})
		}
		v.Racers = append(v.Racers, rv)
	}
	return v, steps
}

// freshOrder is the first of order-42, order-43, … that the lab has not
// charged: a stepped race started from the page races over a clean order.
func freshOrder(ctx context.Context, h *house.House, l *labs.Lab) (string, error) {
	for n := 42; n < 142; n++ {
		order := fmt.Sprintf("order-%d", n)
		c, err := h.Ledger.OrderCharges(ctx, l, order)
		if err != nil || c == 0 {
			return order, err
		}
	}
	return "order-42", nil
}

func addSteppedForms(e *echo.Echo, h *house.House, hub *Hub) {
	e.POST("/labs/:lab/stepped", labForm(h, hub, func(c echo.Context, l *labs.Lab) error {
		ctx := c.Request().Context()
		order, err := freshOrder(ctx, h, l)
		if err == nil {
			_, err = h.Stepped.Start(ctx, l, order, 1500, sim.MinRacers)
		}
		return err
	}), oneValueEach, withLang)
	e.POST("/labs/:lab/stepped/step", labForm(h, hub, func(c echo.Context, l *labs.Lab) error {
		_, err := h.Stepped.Step(c.Request().Context(), l, c.FormValue("race"), c.FormValue("racer"), "")
		return err
	}), oneValueEach, withLang)
	e.POST("/labs/:lab/stepped/run", labForm(h, hub, func(c echo.Context, l *labs.Lab) error {
		_, err := h.Stepped.Run(c.Request().Context(), l, c.FormValue("race"))
		return err
	}), oneValueEach, withLang)
	e.POST("/labs/:lab/stepped/abort", labForm(h, hub, func(c echo.Context, l *labs.Lab) error {
		_, err := h.Stepped.Abort(c.Request().Context(), l, c.FormValue("race"))
		return err
	}), oneValueEach, withLang)
	// The article's order: A's SELECT, B's SELECT, then each to its end.
	e.POST("/labs/:lab/stepped/preset", labForm(h, hub, func(c echo.Context, l *labs.Lab) error {
		ctx, id := c.Request().Context(), c.FormValue("race")
		for _, st := range []struct{ racer, to string }{{"A", ""}, {"B", ""}, {"A", "end"}, {"B", "end"}} {
			if _, err := h.Stepped.Step(ctx, l, id, st.racer, st.to); err != nil {
				return err
			}
		}
		return nil
	}), oneValueEach, withLang)
}
