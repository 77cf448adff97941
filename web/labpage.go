package web

import (
	"context"
	"net/http"

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
// lab's history. teacher is the token of the browser the page is for (its
// cookie), which says whether it steers the lab's class; "" for a live
// update, the same for every browser.
func labPage(ctx context.Context, h *house.House, hub *Hub, l *labs.Lab, teacher string) (views.LabPage, error) {
	s := l.Settings()
	p := views.LabPage{LabID: l.ID, IsDemo: l.ID == sim.DemoLab, Settings: settingsView(s), Postgres: h.Store.Postgres(),
		ReadAt: h.Clock.Now().UnixMicro()}
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
	p.Stepped, p.Diagram.Steps = steppedView(h, l, p.Lesson.N, p.Latest)
	p.Storm = stormView(h, l, p.Lesson.N)
	if p.Class, p.Steers, err = classView(ctx, h, l, teacher); err != nil {
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
		Budget: string(s.Retry.Budget), MaxTokens: s.Retry.MaxTokens, BudgetPercent: s.Retry.BudgetPercent,
		TokenRatio: s.Retry.TokenRatio, RespectRetryAfter: s.Retry.RespectRetryAfter, CapacityRPS: s.CapacityRPS,
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
		p, err := labPage(c.Request().Context(), h, hub, l, teacherOf(c))
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
