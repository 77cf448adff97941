package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/client/storm"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/sim/lesson"
	"idemlab/views"
)

// stormView is the lab's storm panel: its last two storms, shown while it
// has any or its lesson is the storms'.
func stormView(h *house.House, l *labs.Lab, lessonN int) views.StormView {
	runs := h.Storms.Latest(l.ID, 2)
	v := views.StormView{Lessons: isStormLesson(lessonN)}
	v.Show = len(runs) > 0 || v.Lessons
	for i, r := range runs {
		if r.State == "running" {
			v.Running = r.ID
		}
		v.Storms = append(v.Storms, stormRun(l.ID, i+1, r))
	}
	return v
}

// isStormLesson reports whether lesson n runs storms.
func isStormLesson(n int) bool {
	ls, err := lesson.Number(n)
	return err == nil && ls.Expect.Storms != nil
}

func stormRun(lab string, n int, r storm.View) views.StormRun {
	u := r.Under
	run := views.StormRun{N: n, ID: r.ID, State: r.State, Path: api.StormPath(lab, r.ID), Clients: r.Request.Clients, DurationS: r.Request.DurationS,
		EveryS: r.Request.EveryS, Key: r.Request.Key, Lost: r.Request.Fates.ResponseLost,
		Protection: string(u.Protection), Jitter: string(u.Retry.Jitter), Budget: string(u.Retry.Budget),
		BudgetPercent: u.Retry.BudgetPercent, Capacity: u.CapacityRPS,
		Operations: r.Summary.Operations, Completed: r.Summary.Completed, Attempts: r.Summary.Attempts,
		Amplification: r.Summary.Amplification, DrainMS: r.Summary.DrainMS, DoubleCharges: r.Summary.DoubleCharges,
		Peak: r.PeakRetries()}
	if o := r.Request.Outage; o != nil {
		run.OutageAt, run.OutageFor = o.AtS, o.ForS
	}
	run.Buckets = make([]views.StormBucket, len(r.Series))
	for i, b := range r.Series {
		run.Buckets[i] = views.StormBucket{First: b.First, Retries: b.Retries, Admitted: b.Admitted, Busy: b.Busy, Down: b.Down, Successes: b.Successes}
	}
	return run
}

// stormForm reads the storm form: its numbers as the API's request, each
// field that is not one named.
func stormForm(c echo.Context) (sim.StormRequest, error) {
	var fs []sim.FieldError
	number := func(name string) float64 {
		f, err := strconv.ParseFloat(strings.TrimSpace(c.FormValue(name)), 64)
		if err != nil {
			fs = append(fs, sim.Broke(name, "number"))
		}
		return f
	}
	r := sim.StormRequest{Clients: int(number("clients")), DurationS: int(number("duration_s")), EveryS: number("every_s"),
		Key: c.FormValue("key") == "true"}
	at, length := number("outage_at"), number("outage_for")
	if length > 0 {
		r.Outage = &sim.StormOutage{AtS: at, ForS: length}
	}
	r.Fates.ResponseLost = number("lost_percent") / 100
	if len(fs) > 0 {
		return r, sim.Invalid(fs...)
	}
	return r, r.Validate()
}

// handleStormsPage is the lab's last two storms side by side, as wide as
// the screen (GET /labs/{lab}/storms); region, its body alone, which the
// page asks for every second while a storm runs.
func handleStormsPage(h *house.House, region bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := h.Labs.Lab(c.Request().Context(), c.Param("lab"))
		if err != nil {
			return err
		}
		p := views.LabPage{LabID: l.ID, IsDemo: l.ID == sim.DemoLab, Large: largeType(c), Storm: stormView(h, l, l.Lesson().N)}
		if region {
			return render(c, http.StatusOK, views.StormsRegion(p))
		}
		return render(c, http.StatusOK, views.StormsPage(p))
	}
}

// addStormForms adds the storm panel's forms and the storms page.
func addStormForms(e *echo.Echo, root *echo.Group, h *house.House, hub *Hub) {
	get(root, "/labs/:lab/storms", handleStormsPage(h, false), withLang)
	get(root, "/labs/:lab/storms/region", handleStormsPage(h, true), withLang)
	e.POST("/labs/:lab/storm", labForm(h, hub, func(c echo.Context, l *labs.Lab) error {
		r, err := stormForm(c)
		if err == nil {
			_, err = h.Storms.Start(l, r)
		}
		return err
	}), oneValueEach, withLang)
	e.POST("/labs/:lab/storm/stop", labForm(h, hub, func(c echo.Context, l *labs.Lab) error {
		return h.Storms.Stop(c.Request().Context(), l.ID, c.FormValue("storm"))
	}), oneValueEach, withLang)
	e.POST("/labs/:lab/storm/preset", labForm(h, hub, func(c echo.Context, l *labs.Lab) error {
		return h.Lessons.PlayStory(c.Request().Context(), l, c.FormValue("story"))
	}), oneValueEach, withLang)
	e.POST("/labs/:lab/storm/clear", labForm(h, hub, func(c echo.Context, l *labs.Lab) error {
		h.Storms.Clear(l.ID)
		return nil
	}), oneValueEach, withLang)
}

// stormStepWords says a lesson's storm.
func stormStepWords(r *sim.StormRequest) views.Msg {
	if r == nil {
		return m("lesson.step.other")
	}
	keys := m("storm.cap.no-keys")
	if r.Key {
		keys = m("storm.cap.keys")
	}
	switch {
	case r.Outage != nil:
		return m("lesson.step.storm-outage", r.Clients, r.DurationS, keys, views.Decimal(r.Outage.AtS), views.Decimal(r.Outage.ForS))
	case r.Fates.ResponseLost > 0:
		return m("lesson.step.storm-lost", r.Clients, r.DurationS, keys, int(r.Fates.ResponseLost*100+0.5))
	}
	return m("lesson.step.storm", r.Clients, r.DurationS, keys)
}

// capacityWords says a switch of the server's capacity and the clients'
// retries.
func capacityWords(capacity int, r *sim.RetryPatch) views.Msg {
	took := m("lesson.capacity.any")
	if capacity > 0 {
		took = m("lesson.capacity.rps", capacity)
	}
	budget := m("opt.budget.none")
	if r.Budget != nil {
		budget = m("opt.budget." + string(*r.Budget))
	}
	return m("lesson.step.capacity", took, deref(r.MaxAttempts), deref(r.BaseMS), deref(r.CapMS), budget)
}

func deref(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// stormWatch says what the storm lesson holds its storms to, each with
// what they showed.
func stormWatch(seen []lesson.StormSeen) []views.Watch {
	var out []views.Watch
	for _, s := range seen {
		key := "lesson.watch.storm." + s.Measure
		switch {
		case s.Measure == lesson.Amplification && s.Than == 0:
			key += ".most"
		case s.Measure == lesson.DoubleCharges && s.Rule == ">":
			key += ".some"
		case s.Measure == lesson.DoubleCharges:
			key += ".none"
		}
		now := m("lesson.watch.now", views.Decimal(s.Got))
		if s.Than > 0 {
			now = m("lesson.watch.storm.now", views.Decimal(s.Got), views.Decimal(s.Against))
		}
		out = append(out, views.Watch{Msg: m(key, s.Of, s.Than, views.Decimal(s.Bound)), Now: now, Met: s.Met})
	}
	return out
}

func countMet(seen []lesson.StormSeen) (n int) {
	for _, s := range seen {
		if s.Met {
			n++
		}
	}
	return n
}
