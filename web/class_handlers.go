package web

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/class"
	"idemlab/sim/house"
	"idemlab/sim/labs"
)

// classJSON is a lab's class as the API shows it.
type classJSON struct {
	Code     string        `json:"code"`
	JoinURL  string        `json:"join_url"`
	QR       string        `json:"qr"` // the join address's QR code, as SVG, at this address
	EndsAt   string        `json:"ends_at"`
	Ended    bool          `json:"ended"`
	Asked    int           `json:"asked"`
	Question *questionJSON `json:"question"`
}

// questionJSON is a class's question as the API shows it: the votes' split
// and the right choice only once revealed.
type questionJSON struct {
	N            int            `json:"n"`
	Lesson       int            `json:"lesson"` // 0: the generic question
	Step         int            `json:"step"`   // the lesson's step, from 0
	Measure      string         `json:"measure"`
	OrderID      string         `json:"order_id,omitempty"`
	Choices      []string       `json:"choices"`
	State        string         `json:"state"` // open, running, revealed
	Votes        int            `json:"votes"`
	Distribution map[string]int `json:"distribution,omitempty"`
	Right        *string        `json:"right,omitempty"` // "" when none of the choices happened
	Share        *int           `json:"share,omitempty"` // percent of the votes that were right
	Seen         any            `json:"seen,omitempty"`  // what the step did, as measured
}

func classOut(cl class.Class) classJSON {
	out := classJSON{Code: cl.Code, JoinURL: joinURL(cl.Origin, cl.Code), QR: api.JoinQRPath(cl.Code),
		EndsAt: cl.Ends.UTC().Format(timeJSON), Ended: cl.Ended, Asked: cl.Asked}
	if cl.Question != nil {
		q := questionOut(*cl.Question)
		out.Question = &q
	}
	return out
}

func questionOut(q class.Question) questionJSON {
	out := questionJSON{N: q.N, Lesson: q.Lesson, Step: q.Step, Measure: string(q.Measure), OrderID: q.Order,
		Choices: q.Choices, State: q.State, Votes: q.Votes}
	if q.State == class.Revealed {
		right, share := q.Right, q.Share()
		out.Distribution, out.Right, out.Share, out.Seen = map[string]int{}, &right, &share, q.Seen
		for _, c := range q.Choices {
			out.Distribution[c] = q.Counts[c]
		}
	}
	return out
}

// timeJSON is how the API writes a time.
const timeJSON = "2006-01-02T15:04:05.000Z07:00"

// handleClassStart starts a class on the lab: 201 and the teacher's
// cookie; asked again by the same browser while it runs, 200 and the class
// as it stands.
func handleClassStart(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		cl, created, err := h.Classes.Start(c.Request().Context(), labOf(c), teacherMint(c), origin(c))
		if err != nil {
			return err
		}
		status := http.StatusOK
		if created {
			status = http.StatusCreated
		}
		return c.JSON(status, classOut(cl))
	}
}

func handleClassGet(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		cl, err := h.Classes.Get(c.Request().Context(), labOf(c))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, classOut(cl))
	}
}

func handleClassEnd(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := h.Classes.End(c.Request().Context(), labOf(c), teacherOf(c)); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// handleClassAsk opens a question: of the lesson's next step, or, with
// {"action": "charge" | "retry" | "race"}, the generic one about it.
func handleClassAsk(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body struct {
			Action string `json:"action"`
		}
		if err := decodeJSON(c, &body, true); err != nil {
			return err
		}
		l := labOf(c)
		var act *sim.Action
		if body.Action != "" {
			var err error
			if act, err = genericAction(body.Action, l); err != nil {
				return err
			}
		}
		q, err := h.Classes.Open(c.Request().Context(), l, teacherOf(c), act)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, questionOut(q))
	}
}

func handleClassReveal(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		q, err := h.Classes.Reveal(c.Request().Context(), labOf(c), teacherOf(c))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, questionOut(q))
	}
}

// labForm answers a panel's form (the class's, the stepped race's): do
// acts on the lab, then the lab's regions answer, or the refusal is said
// beside the panel.
func labForm(h *house.House, hub *Hub, do func(c echo.Context, l *labs.Lab) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		if err := do(c, l); err != nil {
			return refuseErr(c, err)
		}
		return answer(c, h, hub, l)
	}
}

// The class panel's forms: start (the teacher's cookie), ask (action:
// charge, retry or race for the generic question; none for the lesson's
// next step), reveal, end.

func startClassForm(h *house.House) func(echo.Context, *labs.Lab) error {
	return func(c echo.Context, l *labs.Lab) error {
		_, _, err := h.Classes.Start(c.Request().Context(), l, teacherMint(c), origin(c))
		return err
	}
}

func askClassForm(h *house.House) func(echo.Context, *labs.Lab) error {
	return func(c echo.Context, l *labs.Lab) error {
		var act *sim.Action
		if kind := c.FormValue("action"); kind != "" {
			var err error
			if act, err = genericAction(kind, l); err != nil {
				return err
			}
		}
		_, err := h.Classes.Open(c.Request().Context(), l, teacherOf(c), act)
		return err
	}
}

func revealClassForm(h *house.House) func(echo.Context, *labs.Lab) error {
	return func(c echo.Context, l *labs.Lab) error {
		_, err := h.Classes.Reveal(c.Request().Context(), l, teacherOf(c))
		return err
	}
}

func endClassForm(h *house.House) func(echo.Context, *labs.Lab) error {
	return func(c echo.Context, l *labs.Lab) error {
		return h.Classes.End(c.Request().Context(), l, teacherOf(c))
	}
}
