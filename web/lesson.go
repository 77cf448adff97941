package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/sim/lesson"
	"idemlab/views"
)

// lessonView is the lesson panel of a lab: the lesson open in it, its steps
// said in words, what the article expects and how the ledger compares now.
func lessonView(ctx context.Context, h *house.House, l *labs.Lab) (views.LessonView, error) {
	st := l.Lesson()
	v := views.LessonView{N: st.N, Count: len(lesson.All()), Ready: st.Ready, Next: st.Next, State: lesson.Idle}
	if st.N == 0 {
		return v, nil
	}
	ls, err := lesson.Number(st.N)
	if err != nil {
		return v, err
	}
	v.Postgres, v.Here = ls.Postgres, h.Store.Postgres()
	for _, a := range ls.Steps {
		v.Steps = append(v.Steps, stepWords(a))
	}
	r, err := h.Lessons.Check(ctx, l, ls, st)
	if err != nil {
		return v, err
	}
	v.Expect = totalsWords(ls.Expect.Charges, ls.Expect.Total)
	v.Now = totalsWords(r.Charges, r.Total)
	for i, o := range ls.Expect.Emails {
		v.Watch = append(v.Watch, views.Watch{
			Msg: m("lesson.watch.emails", o.OrderID, views.Count{N: o.Emails, Key: "mail.count"}),
			Now: m("lesson.watch.now", views.Count{N: r.Emails[i].Emails, Key: "mail.count"}),
			Met: r.Emails[i].Emails == o.Emails,
		})
	}
	for i, o := range ls.Expect.Orders {
		if len(ls.Expect.Emails) > 0 {
			break // the emails are the lesson; the totals say the charges
		}
		v.Watch = append(v.Watch, views.Watch{
			Msg: m("lesson.watch.order", o.OrderID, views.Count{N: o.Charges, Key: "lesson.charges"}),
			Now: m("lesson.watch.now", views.Count{N: r.Orders[i].Charges, Key: "lesson.charges"}),
			Met: r.Orders[i].Charges == o.Charges,
		})
	}
	for i, a := range ls.Expect.Answers {
		now := m("lesson.answer.none")
		if got := r.Answers[i].Outcome; got != "" {
			now = outcomeWords(got)
		}
		v.Watch = append(v.Watch, views.Watch{
			Msg: m("lesson.watch.answer", a.OrderID, outcomeWords(a.Outcome)),
			Now: m("lesson.watch.now", now),
			Met: r.Answers[i].Outcome == a.Outcome,
		})
	}
	if ls.Expect.Storms != nil {
		v.Expect = m("lesson.storms", views.Count{N: int64(len(r.Storms)), Key: "lesson.storm.checks"})
		v.Now = m("lesson.storms.now", views.Count{N: int64(countMet(r.Storms)), Key: "lesson.storm.checks"})
		v.Watch = append(v.Watch, stormWatch(r.Storms)...)
	}
	v.State = r.State
	return v, nil
}

func totalsWords(charges, total int64) views.Msg {
	return m("lesson.totals", views.Count{N: charges, Key: "lesson.charges"}, views.Amount(total))
}

// stepWords says what a lesson's step does.
func stepWords(a sim.Action) views.Msg {
	switch a.Kind {
	case "charge":
		fate := m("lesson.fate." + string(a.Fate))
		if a.Fate == sim.FateResponseLost { // the server does what the method asks: it charges nothing
			fate = m("lesson.fate.response-lost.order")
		}
		switch a.Method {
		case http.MethodPut:
			return m("lesson.step.put", a.OrderID, views.Amount(a.Amount), fate)
		case http.MethodDelete:
			return m("lesson.step.delete", a.OrderID, fate)
		}
		return m("lesson.step.charge", a.OrderID, views.Amount(a.Amount), m("lesson.fate."+string(a.Fate)))
	case "retry":
		return m("lesson.step.retry", m("lesson.fate."+string(a.Fate)))
	case "race":
		return m("lesson.step.race", a.N)
	case "clock":
		return m("lesson.step.clock", a.N)
	case "stepped":
		return m("lesson.step.stepped", a.OrderID, views.Amount(a.Amount), a.N)
	case "step":
		switch a.To {
		case "end":
			return m("lesson.step.step-end", a.Racer)
		case "run":
			return m("lesson.step.step-run")
		case "abort":
			return m("lesson.step.step-abort")
		}
		return m("lesson.step.step", a.Racer)
	case "storm":
		return stormStepWords(a.Storm)
	case "settings":
		switch p := a.Settings; {
		case p == nil:
		case p.CapacityRPS != nil && p.Retry != nil:
			return capacityWords(*p.CapacityRPS, p.Retry)
		case p.Retry != nil && p.Retry.Jitter != nil:
			return m("lesson.step.jitter", m("opt.jitter."+string(*p.Retry.Jitter)))
		case p.Retry != nil && p.Retry.Budget != nil:
			return m("lesson.step.budget", m("opt.budget."+string(*p.Retry.Budget)))
		case p.Protection != nil && p.ServerFault != nil:
			return m("lesson.step.protection-fault", m("opt.protection."+string(*p.Protection)), m("lesson.fault."+string(*p.ServerFault)))
		case p.ServerFault != nil:
			return m("lesson.step.fault", m("lesson.fault."+string(*p.ServerFault)))
		case p.Protection != nil:
			return m("lesson.step.protection", m("opt.protection."+string(*p.Protection)))
		case p.KeyStrategy != nil:
			return m("lesson.step.key", m("opt.key."+string(*p.KeyStrategy)))
		case p.Isolation != nil:
			return m("lesson.step.isolation", m("opt.isolation."+string(*p.Isolation)))
		case p.ConsumerDedup != nil && p.PublishDedup != nil:
			return m("lesson.step.dedup-instead", m("opt.dedup."+string(*p.ConsumerDedup)))
		case p.ConsumerDedup != nil:
			return m("lesson.step.dedup", m("opt.dedup."+string(*p.ConsumerDedup)))
		case p.PublishDedup != nil && *p.PublishDedup:
			return m("lesson.step.publish-dedup")
		}
	}
	return m("lesson.step.other")
}

func handleLessonChoose(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(c.FormValue("lesson"))
		if err != nil {
			return refuse(c, views.M("notice.lesson-number", len(lesson.All())))
		}
		if err := h.Lessons.Choose(c.Request().Context(), l, n); err != nil {
			return refuseLesson(c, err)
		}
		return answer(c, h, hub, l)
	}
}

func handleLessonSetUp(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		if err := h.Lessons.SetUp(c.Request().Context(), l); err != nil {
			return refuseLesson(c, err)
		}
		return answer(c, h, hub, l)
	}
}

// handleLessonStep takes the step the form names. The form carries the
// step's number, so a step sent twice (a retried post, two browsers at
// once) is taken once: the program eats its own cooking.
func handleLessonStep(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		at, err := strconv.Atoi(c.FormValue("at"))
		if err != nil {
			return refuse(c, views.M("notice.lesson-step"))
		}
		if _, err := h.Lessons.Step(c.Request().Context(), l, at); err != nil {
			return refuseLesson(c, err)
		}
		return answer(c, h, hub, l)
	}
}

// refuseLesson says why a lesson's set-up or step was refused.
func refuseLesson(c echo.Context, err error) error {
	var se *sim.Error
	if errors.As(err, &se) && se.Code == sim.EInvalid && len(se.Fields) > 0 && se.Fields[0].Field == "lesson" {
		switch se.Fields[0].Rule {
		case lesson.NotSetUp:
			return refuse(c, views.M("notice.lesson-setup"))
		case lesson.NotChosen:
			return refuse(c, views.M("notice.lesson"))
		case sim.PostgresOnly:
			return refuse(c, views.M("lesson.postgres"))
		}
		return refuse(c, views.M("notice.lesson-number", len(lesson.All())))
	}
	return refuseErr(c, err)
}

// lessonJSON is a lab's lesson as the API shows it.
type lessonJSON struct {
	Lesson int    `json:"lesson"` // 0 when none is open
	Ready  bool   `json:"ready"`
	Next   int    `json:"next"`  // the next step's number, from 0
	Steps  int    `json:"steps"` // how many there are
	State  string `json:"state"` // idle, pending, met, differs
	// Taken, in the answer to a step, says whether this request took it
	// (false: the step was taken already, or the lesson is over).
	Taken *bool `json:"taken,omitempty"`
}

func lessonAnswer(c echo.Context, h *house.House, l *labs.Lab, taken *bool) error {
	v, err := lessonView(c.Request().Context(), h, l)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, lessonJSON{Lesson: v.N, Ready: v.Ready, Next: v.Next, Steps: len(v.Steps), State: v.State, Taken: taken})
}

func handleLessonAPI(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error { return lessonAnswer(c, h, labOf(c), nil) }
}

func handleLessonChooseAPI(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body struct {
			Lesson *int `json:"lesson"`
		}
		if err := decodeJSON(c, &body, false); err != nil {
			return err
		}
		if body.Lesson == nil {
			return sim.Invalid(sim.Broke("lesson", "required"))
		}
		l := labOf(c)
		if err := h.Lessons.Choose(c.Request().Context(), l, *body.Lesson); err != nil {
			return err
		}
		return lessonAnswer(c, h, l, nil)
	}
}

func handleLessonSetUpAPI(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		l := labOf(c)
		if err := h.Lessons.SetUp(c.Request().Context(), l); err != nil {
			return err
		}
		return lessonAnswer(c, h, l, nil)
	}
}

func handleLessonStepAPI(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body struct {
			At *int `json:"at"`
		}
		if err := decodeJSON(c, &body, false); err != nil {
			return err
		}
		if body.At == nil {
			return sim.Invalid(sim.Broke("at", "step-at"))
		}
		l := labOf(c)
		taken, err := h.Lessons.Step(c.Request().Context(), l, *body.At)
		if err != nil {
			return err
		}
		return lessonAnswer(c, h, l, &taken)
	}
}
