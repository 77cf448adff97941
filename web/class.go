package web

import (
	"context"
	"net"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/class"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/sim/lesson"
	"idemlab/views"
)

// teacherCookie holds the teacher's token: the browser that started a
// class is the one that steers it.
const teacherCookie = "idemlab_teacher"

// teacherOf is the request's teacher's token, "" when it has none: its
// cookie's, or the one this request's answer sets (teacherMint).
func teacherOf(c echo.Context) string {
	if t, ok := c.Get(teacherCookie).(string); ok {
		return t
	}
	if ck, err := c.Cookie(teacherCookie); err == nil && tokenLike(ck.Value) {
		return ck.Value
	}
	return ""
}

// teacherMint is the request's teacher's token, a new one when it has
// none, set in its cookie (HttpOnly: no script reads it) for the class's
// time.
func teacherMint(c echo.Context) string {
	t := teacherOf(c)
	if t == "" {
		t = class.Token()
	}
	c.SetCookie(&http.Cookie{Name: teacherCookie, Value: t, Path: "/", MaxAge: int(class.Lasts.Seconds()) + 3600,
		HttpOnly: true, Secure: c.IsTLS(), SameSite: http.SameSiteStrictMode})
	c.Set(teacherCookie, t)
	return t
}

// tokenLike reports whether a cookie's value can be a token or a voter's
// id: short, of letters, digits, - and _.
func tokenLike(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// origin is where a class started by this request is joined: its scheme
// and host.
func origin(c echo.Context) string { return c.Scheme() + "://" + c.Request().Host }

// classView is the lab's class as its projector shows it, and whether the
// browser of the teacher's token steers it (class.Class.SteeredBy).
func classView(ctx context.Context, h *house.House, l *labs.Lab, teacher string) (views.ClassView, bool, error) {
	var v views.ClassView
	cl, err := h.Classes.Get(ctx, l)
	if sim.ErrorCode(err) == sim.ENotFound {
		return v, false, nil
	}
	if err != nil {
		return v, false, err
	}
	v = joinView(cl.Origin, cl.Code)
	v.On, v.Ended, v.Asked = !cl.Ended, cl.Ended, cl.Asked
	if st := l.Lesson(); st.Ready {
		if ls, err := lesson.Number(st.N); err == nil {
			_, _, v.CanAsk = class.StepAsk(ls, st.Next)
		}
	}
	if cl.Question != nil {
		v.Q = questionView(*cl.Question)
	}
	return v, cl.SteeredBy(teacher), nil
}

// joinURL is where phones join the class with the code, at origin.
func joinURL(origin, code string) string { return origin + api.JoinPath(code) }

// joinView is how phones join the class with the code, at origin: the
// address, its QR code, the join screen, whether phones can reach it.
func joinView(origin, code string) views.ClassView {
	return views.ClassView{Code: code, JoinURL: joinURL(origin, code), QR: api.JoinQRPath(code),
		Screen: api.JoinScreenPath(code), Local: loopback(origin)}
}

// loopback reports whether an origin's host is this computer's own.
func loopback(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	if u.Hostname() == "localhost" {
		return true
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// questionView says a question in words.
func questionView(q class.Question) *views.QuestionView {
	v := &views.QuestionView{N: q.N, About: stepWords(q.Action), State: q.State, Votes: q.Votes, Right: q.Right, Share: q.Share()}
	switch q.Measure {
	case class.MeasureOrder:
		v.Text = m("class.q.order", q.Order)
	case class.MeasureAdded:
		v.Text = m("class.q.added")
	case class.MeasureAnswer:
		v.Text = m("class.q.answer", q.Order)
	case class.MeasureEmails:
		v.Text = m("class.q.emails", q.Order)
	case class.MeasureAmplification, class.MeasurePeak, class.MeasureDoubles:
		v.Text = m("class.q." + string(q.Measure))
	}
	for i, code := range q.Choices {
		v.Choices = append(v.Choices, views.ChoiceView{Code: code, Letter: string(rune('A' + i)), Label: m("class.c." + code),
			Count: q.Counts[code], Percent: q.Percent(code)})
	}
	if q.State == class.Revealed {
		v.Seen = seenWords(q)
	}
	return v
}

// seenWords says what the step did, as the question measured it.
func seenWords(q class.Question) views.Msg {
	pays := func(n int64) views.Count { return views.Count{N: n, Key: "class.payments"} }
	switch q.Measure {
	case class.MeasureAdded:
		return m("class.seen.added", pays(q.Seen.Payments-q.Asked.Payments))
	case class.MeasureAnswer:
		if q.Seen.Answer == "" {
			return m("lesson.answer.none")
		}
		return m("class.seen.answer", outcomeWords(q.Seen.Answer))
	case class.MeasureEmails:
		return m("class.seen.emails", q.Order, views.Count{N: q.Seen.Emails, Key: "mail.count"})
	case class.MeasureAmplification, class.MeasurePeak, class.MeasureDoubles:
		if f := q.Seen.Storm; f != nil {
			return m("class.seen.storm", views.Decimal(f.Amplification), f.Peak, f.PrevPeak, views.Count{N: int64(f.Doubles), Key: "storm.doubles"})
		}
		return m("class.seen.no-storm")
	}
	return m("class.seen.order", q.Order, pays(q.Seen.Order))
}

// genericAction is the action outside lessons that a generic question asks
// about: a new charge through the lab's network, a retry of the latest
// operation, or two retries at once.
func genericAction(kind string, l *labs.Lab) (*sim.Action, error) {
	switch kind {
	case "charge":
		return &sim.Action{Kind: "charge", OrderID: "order-42", Amount: 1500, Fate: l.Settings().Network}, nil
	case "retry":
		return &sim.Action{Kind: "retry", Fate: l.Settings().Network}, nil
	case "race":
		return &sim.Action{Kind: "race", N: 2}, nil
	}
	return nil, sim.Invalid(sim.Broke("action", "class-action"))
}
