package web

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/views"
)

// answer ends a form post: htmx gets the lab's regions (every other page
// gets them over SSE); a plain form post is sent back to the page (303).
func answer(c echo.Context, h *house.House, hub *Hub, l *labs.Lab) error {
	if c.Request().Header.Get("HX-Request") != "true" {
		return c.Redirect(http.StatusSeeOther, labBase(l.ID))
	}
	ctx := c.Request().Context()
	p, err := labPage(ctx, h, hub, l, teacherOf(c))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := views.Partials(p).Render(ctx, &buf); err != nil {
		return err
	}
	for _, id := range []string{"notice", views.ChargeNotice, views.RetryNotice, views.SettingsNotice} {
		if err := views.NoticeAt(id, views.Msg{}).Render(ctx, &buf); err != nil { // what was refused before is done now
			return err
		}
	}
	if err := views.SteersPartial(p.Steers, p.Class.Code).Render(ctx, &buf); err != nil {
		return err
	}
	c.Response().After(func() { hub.refresh(l.ID) })
	return c.HTMLBlob(http.StatusOK, buf.Bytes())
}

// refuse tells the person who acted why the form was refused: a notice for
// htmx, a short page for a plain post. Nothing was changed.
func refuse(c echo.Context, msg views.Msg) error {
	if c.Request().Header.Get("HX-Request") == "true" {
		return render(c, http.StatusUnprocessableEntity, views.NoticeAt(noticeOf(c), msg))
	}
	return render(c, http.StatusUnprocessableEntity, views.Refused(msg, labBase(c.Param("lab"))))
}

// noticeOf is the notice where a refusal of the request is said: beside the
// form that sent it.
func noticeOf(c echo.Context) string {
	switch p := c.Path(); {
	case strings.HasSuffix(p, "/charge"):
		return views.ChargeNotice
	case strings.HasSuffix(p, "/retry"), strings.HasSuffix(p, "/race"):
		return views.RetryNotice
	case strings.HasSuffix(p, "/settings"):
		return views.SettingsNotice
	case strings.Contains(p, "/class"):
		return views.ClassNotice
	}
	return "notice"
}

// refusal says why the lab refused err, in the words of the form; errors
// that are not the person's doing go on to the error handler.
func refusal(err error) (views.Msg, bool) {
	var se *sim.Error
	if !errors.As(err, &se) || se.Code == sim.EInternal {
		return views.Msg{}, false
	}
	if se.Code == sim.ENotFound && se.Key != "no-stepped-race" {
		return views.M("notice.no-operation"), true
	}
	if len(se.Fields) > 0 {
		f := se.Fields[0]
		switch f.Field {
		case "racer":
			return views.M("notice.racer", ruleMsg(f)), true
		case "amount":
			return views.M("notice.amount"), true
		case "parallel":
			return views.M("notice.parallel"), true
		case "class":
			return views.M("notice.class", ruleMsg(f)), true
		}
		return views.M("notice.setting", f.Field, ruleMsg(f)), true
	}
	return errorMsg(se), true
}

// refuseErr refuses the form for err, or passes err on. A server at its
// limits, or an address at its share of them, is not the form's doing: its
// 503 or 429 and Retry-After go through the error handler, which says so in
// a notice, or a page for a plain post.
func refuseErr(c echo.Context, err error) error {
	if code := sim.ErrorCode(err); code == sim.EBusy || code == sim.ELimited {
		return err
	}
	if msg, ok := refusal(err); ok {
		return refuse(c, msg)
	}
	return err
}

func formLab(h *house.House, c echo.Context) (*labs.Lab, error) {
	return h.Labs.Lab(c.Request().Context(), c.Param("lab"))
}

func handleFireCharge(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		amount, err := strconv.ParseInt(c.FormValue("amount"), 10, 64)
		if err != nil {
			return refuse(c, views.M("notice.amount"))
		}
		orderID := c.FormValue("order_id")
		r := sim.OperationRequest{OrderID: orderID, Amount: amount, Method: c.FormValue("method")}
		if _, err := h.Client.Start(c.Request().Context(), l, r); err != nil {
			var se *sim.Error
			if errors.As(err, &se) && len(se.Fields) > 0 && se.Fields[0].Field == "order_id" {
				return refuse(c, views.M("notice.order-id", orderID))
			}
			return refuseErr(c, err)
		}
		return answer(c, h, hub, l)
	}
}

func handleRetryForm(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		withKey := c.FormValue("with_key") != "false"
		if _, err := h.Client.Retry(c.Request().Context(), l, sim.LatestOperation, withKey, ""); err != nil {
			return refuseErr(c, err)
		}
		return answer(c, h, hub, l)
	}
}

func handleRaceForm(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(c.FormValue("parallel"))
		if err != nil {
			return refuse(c, views.M("notice.parallel"))
		}
		if _, err := h.Client.Race(c.Request().Context(), l, sim.LatestOperation, n); err != nil {
			return refuseErr(c, err)
		}
		return answer(c, h, hub, l)
	}
}

func handleResetForm(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		if err := h.Labs.Reset(c.Request().Context(), l); err != nil {
			return err
		}
		return answer(c, h, hub, l)
	}
}

func handleNewLab(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := h.Labs.CreatePrivate(c.Request().Context())
		if err != nil {
			return err
		}
		if c.Request().Header.Get("HX-Request") == "true" {
			c.Response().Header().Set("HX-Redirect", labBase(l.ID))
			return c.NoContent(http.StatusNoContent)
		}
		return c.Redirect(http.StatusSeeOther, labBase(l.ID))
	}
}
