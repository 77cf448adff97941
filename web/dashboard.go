package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/views"
)

// pageRows is how many payments the page shows.
const pageRows = 100

// labPage gathers everything the lab's page shows. Each part is bounded
// (the newest payments, the first doubly charged orders, the latest
// operation, the lab's kept counts): a page costs the same whatever the
// lab's history.
func labPage(ctx context.Context, h *house.House, hub *Hub, l *labs.Lab) (views.LabPage, error) {
	s := l.Settings()
	p := views.LabPage{LabID: l.ID, IsDemo: l.ID == sim.DemoLab, Settings: settingsView(s), Postgres: h.Store.Postgres()}
	for _, c := range sim.Checklist(s) {
		p.Checks = append(p.Checks, views.Check{Question: c.Question, Yes: c.Yes, Why: c.Why})
	}
	ps, err := h.Ledger.Payments(ctx, l, pageRows, 0)
	if err != nil {
		return p, err
	}
	t, err := h.Ledger.Totals(ctx, l)
	if err != nil {
		return p, err
	}
	doubles, err := h.Ledger.DoubleCharges(ctx, l, views.MaxDoubles)
	if err != nil {
		return p, err
	}
	p.Ledger = ledgerView(ps, t, doubles)
	if p.Ledger.Lost, p.Ledger.LostCount, err = h.Ledger.LostCharges(ctx, l, views.MaxDoubles); err != nil {
		return p, err
	}
	if p.Keys, err = keysView(ctx, h, l); err != nil {
		return p, err
	}
	op, err := h.Client.Operation(ctx, l, sim.LatestOperation)
	switch {
	case err == nil:
		p.Latest = op.ID
		p.Diagram = diagramOf(&op)
		ms, err := h.Notify.MessagesOf(ctx, l, &op, 4)
		if err != nil {
			return p, err
		}
		for _, m := range ms {
			dm := views.DiagramMessage{Published: m.Published}
			for _, d := range m.Deliveries {
				dm.Deliveries = append(dm.Deliveries, views.DiagramMessageDelivery{N: d.N, Outcome: d.Outcome})
			}
			p.Diagram.Messages = append(p.Diagram.Messages, dm)
		}
	case sim.ErrorCode(err) == sim.ENotFound:
		p.Diagram = diagramOf(nil)
	default:
		return p, err
	}
	code, actions, ok, err := h.Scenarios.Code(ctx, l)
	if err != nil {
		return p, err
	}
	p.Actions, p.MaxActions = actions, sim.MaxScenarioActions
	if ok {
		p.Scenario = scenarioPath(code)
	}
	if p.Lesson, err = lessonView(ctx, h, l); err != nil {
		return p, err
	}
	if p.Mailbox, p.Queue, err = mailViews(ctx, h, l); err != nil {
		return p, err
	}
	orders, _, err := h.Orders.List(ctx, l, pageMail)
	if err != nil {
		return p, err
	}
	for _, o := range orders {
		p.Orders = append(p.Orders, views.OrderRow{OrderID: o.OrderID, Amount: o.Amount, UpdatedAt: o.UpdatedAt.Local().Format("15:04:05.000")})
	}
	p.Log, p.Progress = hub.snapshot(l.ID)
	return p, nil
}

// pageMail is how many emails and messages the page shows.
const pageMail = 50

// mailViews reads the lab's mailbox and queue for the page.
func mailViews(ctx context.Context, h *house.House, l *labs.Lab) (views.MailboxView, []views.MessageView, error) {
	mb, err := h.Notify.Mailbox(ctx, l, pageMail)
	if err != nil {
		return views.MailboxView{}, nil, err
	}
	v := views.MailboxView{Count: mb.Count, More: mb.More}
	seen := map[string]int{}
	v.Emails = make([]views.EmailRow, len(mb.Emails))
	for i := len(mb.Emails) - 1; i >= 0; i-- { // oldest first, to count the repeats
		e := mb.Emails[i]
		row := views.EmailRow{N: e.N, Subject: e.Subject, OrderID: e.OrderID, ReceivedAt: e.ReceivedAt.Local().Format("15:04:05.000"), Repeat: seen[e.OrderID]}
		if e.MessageID != nil {
			row.MessageID = *e.MessageID
		}
		seen[e.OrderID]++
		v.Emails[i] = row
	}
	for _, d := range mb.Doubled {
		v.Doubled = append(v.Doubled, views.OrderEmails{OrderID: d.OrderID, Emails: d.Emails})
	}
	ms, err := h.Notify.Messages(ctx, l, pageMail)
	if err != nil {
		return v, nil, err
	}
	q := make([]views.MessageView, len(ms))
	for i, m := range ms {
		q[i] = views.MessageView{ID: m.ID, OrderID: m.OrderID, Published: m.Published, Fate: string(m.Fate)}
		for _, d := range m.Deliveries {
			q[i].Deliveries = append(q[i].Deliveries, views.DeliveryView{N: d.N, Outcome: d.Outcome})
		}
	}
	return v, q, nil
}

func settingsView(s sim.Settings) views.SettingsView {
	return views.SettingsView{
		Protection: string(s.Protection), KeyStrategy: string(s.KeyStrategy), Network: string(s.Network),
		AutoRetry: s.Retry.Mode == sim.RetryAuto, MaxAttempts: s.Retry.MaxAttempts, BaseMS: s.Retry.BaseMS,
		CapMS: s.Retry.CapMS, Jitter: string(s.Retry.Jitter), ClientTimeoutMS: s.ClientTimeoutMS,
		ServerDelayMS: s.ServerDelayMS, CheckGapMS: s.CheckGapMS, KeyTTLS: s.KeyTTLS, LockTimeoutMS: s.LockTimeoutMS,
		ServerFault: string(s.ServerFault), Isolation: string(s.Isolation),
		Notify: string(s.Notify), Delivery: string(s.Delivery), ConsumerDedup: string(s.ConsumerDedup),
		PublishDedup: s.PublishDedup, AckWaitMS: s.AckWaitMS, Language: s.Language,
	}
}

func ledgerView(ps []sim.Payment, t sim.Totals, doubles []sim.DoubleCharge) views.LedgerView {
	v := views.LedgerView{Count: t.Payments, Total: t.Total, Doubled: t.Doubled, Over: t.Overcharged}
	// Which charge of its order each row is: count from the oldest shown.
	seen := map[string]int{}
	rows := make([]views.PaymentRow, len(ps))
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		row := views.PaymentRow{ID: p.ID, OrderID: p.OrderID, Amount: p.Amount, CreatedAt: p.CreatedAt.Local().Format("15:04:05.000"), Repeat: seen[p.OrderID]}
		if p.IdempotencyKey != nil {
			row.Key = *p.IdempotencyKey
		}
		seen[p.OrderID]++
		rows[i] = row
	}
	v.Payments = rows
	for _, d := range doubles {
		v.Doubles = append(v.Doubles, views.DoubleCharge{OrderID: d.OrderID, Times: d.Times, Extra: d.Extra, Purchases: d.Purchases})
	}
	return v
}

// labBase is the page address of a lab.
func labBase(id string) string { return views.PagePath(id) }

func handlePage(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Param("lab")
		if id == "" {
			id = sim.DemoLab
		}
		l, err := h.Labs.Lab(c.Request().Context(), id)
		if err != nil {
			return err
		}
		p, err := labPage(c.Request().Context(), h, hub, l)
		if err != nil {
			return err
		}
		p.Large = largeType(c)
		if !p.IsDemo {
			p.ShareURL = c.Scheme() + "://" + c.Request().Host + labBase(l.ID)
		}
		c.Response().Header().Add("Vary", "HX-Request")
		return render(c, http.StatusOK, views.Page(p))
	}
}

// largeType reports whether the page is in large type, for the back of the
// room: ?type=large turns it on and ?type=normal off, and a cookie keeps it.
func largeType(c echo.Context) bool {
	switch c.QueryParam("type") {
	case "large":
		c.SetCookie(&http.Cookie{Name: "idemlab_type", Value: "large", Path: "/", MaxAge: 365 * 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		return true
	case "normal":
		c.SetCookie(&http.Cookie{Name: "idemlab_type", Value: "", Path: "/", MaxAge: -1})
		return false
	}
	ck, err := c.Cookie("idemlab_type")
	return err == nil && ck.Value == "large"
}

// answer ends a form post: htmx gets the lab's regions (every other page
// gets them over SSE); a plain form post is sent back to the page (303).
func answer(c echo.Context, h *house.House, hub *Hub, l *labs.Lab) error {
	if c.Request().Header.Get("HX-Request") != "true" {
		return c.Redirect(http.StatusSeeOther, labBase(l.ID))
	}
	ctx := c.Request().Context()
	p, err := labPage(ctx, h, hub, l)
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
	if se.Code == sim.ENotFound {
		return views.M("notice.no-operation"), true
	}
	if len(se.Fields) > 0 {
		f := se.Fields[0]
		switch f.Field {
		case "amount":
			return views.M("notice.amount"), true
		case "parallel":
			return views.M("notice.parallel"), true
		}
		return views.M("notice.setting", f.Field, ruleMsg(f)), true
	}
	return errorMsg(se), true
}

// refuseErr refuses the form for err, or passes err on. A server at its
// limits is not the person's doing: its 503 and Retry-After go through the
// error handler, which says so in a notice, or a page for a plain post.
func refuseErr(c echo.Context, err error) error {
	if sim.ErrorCode(err) == sim.EBusy {
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

func handleSettingsForm(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := formLab(h, c)
		if err != nil {
			return err
		}
		p, err := settingsPatch(c)
		if err != nil {
			return refuseErr(c, err)
		}
		if _, err := h.Labs.UpdateSettings(c.Request().Context(), l, p); err != nil {
			return refuseErr(c, err)
		}
		return answer(c, h, hub, l)
	}
}

// settingsPatch reads the settings form: every field it sends is set; the
// auto-retry switch is off when absent (an unchecked box sends nothing).
func settingsPatch(c echo.Context) (sim.SettingsPatch, error) {
	var (
		p  sim.SettingsPatch
		fs []sim.FieldError
	)
	str := func(name string) *string {
		if v, ok := c.Request().PostForm[name]; ok && len(v) > 0 {
			return &v[0]
		}
		return nil
	}
	num := func(name string) *int {
		v := str(name)
		if v == nil {
			return nil
		}
		n, err := strconv.Atoi(*v)
		if err != nil {
			fs = append(fs, sim.Broke(name, "whole"))
			return nil
		}
		return &n
	}
	if err := c.Request().ParseForm(); err != nil {
		return p, sim.Invalid(sim.Broke("form", "unreadable"))
	}
	if v := str("protection"); v != nil {
		x := sim.Protection(*v)
		p.Protection = &x
	}
	if v := str("key_strategy"); v != nil {
		x := sim.KeyStrategy(*v)
		p.KeyStrategy = &x
	}
	if v := str("network"); v != nil {
		x := sim.Fate(*v)
		p.Network = &x
	}
	mode := sim.RetryManual
	if str("retry_auto") != nil {
		mode = sim.RetryAuto
	}
	p.Retry = &sim.RetryPatch{Mode: &mode, MaxAttempts: num("max_attempts"), BaseMS: num("base_ms"), CapMS: num("cap_ms")}
	if v := str("jitter"); v != nil {
		x := sim.Jitter(*v)
		p.Retry.Jitter = &x
	}
	if v := str("server_fault"); v != nil {
		x := sim.ServerFault(*v)
		p.ServerFault = &x
	}
	p.KeyTTLS = num("key_ttl_s")
	p.ClientTimeoutMS = num("client_timeout_ms")
	p.ServerDelayMS = num("server_delay_ms")
	p.CheckGapMS = num("check_gap_ms")
	if v := str("isolation"); v != nil {
		x := sim.Isolation(*v)
		p.Isolation = &x
	}
	if v := str("notify"); v != nil {
		x := sim.Notify(*v)
		p.Notify = &x
	}
	if v := str("delivery"); v != nil {
		x := sim.MessageFate(*v)
		p.Delivery = &x
	}
	if v := str("consumer_dedup"); v != nil {
		x := sim.ConsumerDedup(*v)
		p.ConsumerDedup = &x
	}
	if str("publish_dedup_shown") != nil { // the switch is on this form: unchecked sends nothing
		on := str("publish_dedup") != nil
		p.PublishDedup = &on
	}
	p.AckWaitMS = num("ack_wait_ms")
	p.Language = str("language")
	if len(fs) > 0 {
		return p, sim.Invalid(fs...)
	}
	return p, nil
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

// sseHeartbeat keeps idle streams open through proxies and notices gone clients.
const sseHeartbeat = 15 * time.Second

// handleEvents streams the lab's changes as Server-Sent Events. A new stream
// first gets the whole current state, so a page that reconnects (after a
// restart of the server, say) catches up at once.
func handleEvents(h *house.House, hub *Hub) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		l, err := h.Labs.Lab(ctx, c.Param("lab"))
		if err != nil {
			return err
		}
		lang := views.LangOf(ctx)
		s, unsubscribe, err := hub.subscribe(l.ID, lang)
		if err != nil {
			return err
		}
		defer unsubscribe()
		first, err := hub.partials(ctx, l.ID, lang)
		if err != nil {
			return err
		}
		h := c.Response().Header()
		h.Set(echo.HeaderContentType, "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		c.Response().WriteHeader(http.StatusOK)
		var buf bytes.Buffer
		write := func(event string, data []byte) error {
			buf.Reset()
			sseData(&buf, event, data)
			if _, err := c.Response().Write(buf.Bytes()); err != nil {
				return err
			}
			c.Response().Flush()
			return nil
		}
		c.Response().Write([]byte("retry: 1000\n\n"))
		if err := write("", first); err != nil {
			return nil
		}
		tick := time.NewTicker(sseHeartbeat)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-hub.closed:
				return nil
			case <-s.wake:
				swap, sets, gone := s.take()
				if gone {
					return nil // the lab was removed; the page learns it when it reconnects
				}
				if sets != nil {
					if err := write("settings", sets); err != nil {
						return nil
					}
				}
				if swap != nil {
					if err := write("", swap); err != nil {
						return nil
					}
				}
			case <-tick.C:
				if _, err := c.Response().Write([]byte(": keep-alive\n\n")); err != nil {
					return nil
				}
				c.Response().Flush()
			}
		}
	}
}
