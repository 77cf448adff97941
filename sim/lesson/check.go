package lesson

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"idemlab/sim"
	"idemlab/sim/labs"
)

// The states of a lab's lesson, as the API and the panel name them.
const (
	Idle    = "idle"    // no lesson open, or not set up
	Pending = "pending" // set up, steps still to take
	Met     = "met"     // the ledger is what the article says
	Differs = "differs" // every step taken, and the ledger is not
)

// Result is a lesson's outcome as the lab's ledger has it now.
type Result struct {
	State   string // Idle, Pending, Met or Differs
	Met     bool   // the ledger is what the article says
	Charges int64
	Total   int64
	Orders  []OrderCharges    // the expected orders, with their charges now
	Answers []Answer          // the expected orders' answers now ("" when none yet)
	Emails  []sim.OrderEmails // the expected orders, with their emails now
	Storms  []StormSeen       // the lesson's storms, held to what it expects
}

// Check compares the lab's ledger and its operations' answers with what
// the lesson expects, and says where the lab stands in it (st). It reads
// the lab's counts and the expected orders only: its cost does not grow
// with the lab.
func (ls *Lessons) Check(ctx context.Context, l *labs.Lab, lesson Lesson, st sim.LessonState) (Result, error) {
	r, err := ls.check(ctx, l, lesson)
	switch {
	case err != nil:
	case r.Met:
		r.State = Met
	case !st.Ready:
		r.State = Idle
	case st.Next >= len(lesson.Steps):
		r.State = Differs
	default:
		r.State = Pending
	}
	return r, err
}

func (ls *Lessons) check(ctx context.Context, l *labs.Lab, lesson Lesson) (Result, error) {
	var r Result
	t, err := ls.ledger.Totals(ctx, l)
	if err != nil {
		return r, err
	}
	r.Charges, r.Total = t.Payments, t.Total
	met := r.Charges == lesson.Expect.Charges && r.Total == lesson.Expect.Total
	if lesson.Expect.Storms != nil {
		r.Storms, met = ls.stormsSeen(l, lesson)
	}
	for _, o := range lesson.Expect.Orders {
		n, err := ls.ledger.OrderCharges(ctx, l, o.OrderID)
		if err != nil {
			return r, err
		}
		r.Orders = append(r.Orders, OrderCharges{o.OrderID, n})
		met = met && n == o.Charges
	}
	for _, a := range lesson.Expect.Answers {
		got, err := ls.lastAnswer(ctx, l, a.OrderID)
		if err != nil {
			return r, err
		}
		r.Answers = append(r.Answers, Answer{a.OrderID, got})
		met = met && got == a.Outcome
	}
	for _, o := range lesson.Expect.Emails {
		n, err := ls.notify.OrderEmails(ctx, l, o.OrderID)
		if err != nil {
			return r, err
		}
		r.Emails = append(r.Emails, sim.OrderEmails{OrderID: o.OrderID, Emails: n})
		met = met && n == o.Emails
	}
	r.Met = met
	return r, nil
}

// lastAnswer is what the server did with the last attempt of the order's
// latest operation; "" when none.
func (ls *Lessons) lastAnswer(ctx context.Context, l *labs.Lab, orderID string) (sim.Outcome, error) {
	var got sim.Outcome
	err := ls.store.QueryRow(ctx, `
SELECT a.outcome FROM attempts a
WHERE a.lab_id = ?1 AND a.op_id = (SELECT id FROM operations WHERE lab_id = ?1 AND order_id = ?2 ORDER BY seq DESC LIMIT 1)
ORDER BY a.n DESC LIMIT 1`, l.ID, orderID).Scan(&got)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("lesson: answers of %s: %w", l.ID, err)
	}
	return got, nil
}

// Seen is what a lab's ledger, answers and emails show of one order, and
// of the whole lab: what a class's question measures before and after a
// step, read as the lesson's own check reads them.
type Seen struct {
	Payments int64       `json:"payments"`        // the lab's payments
	Order    int64       `json:"order"`           // the order's payments
	Answer   sim.Outcome `json:"answer"`          // the last attempt of the order's latest operation ("" none)
	Emails   int64       `json:"emails"`          // the order's "order placed" emails
	Storm    *StormFacts `json:"storm,omitempty"` // the lab's latest storm, when it has one
}

// Observe reads what the lab shows of the order now.
func (ls *Lessons) Observe(ctx context.Context, l *labs.Lab, orderID string) (Seen, error) {
	var s Seen
	t, err := ls.ledger.Totals(ctx, l)
	if err != nil {
		return s, err
	}
	s.Payments = t.Payments
	s.Storm = ls.stormFacts(l)
	if orderID == "" {
		return s, nil
	}
	if s.Order, err = ls.ledger.OrderCharges(ctx, l, orderID); err != nil {
		return s, err
	}
	if s.Answer, err = ls.lastAnswer(ctx, l, orderID); err != nil {
		return s, err
	}
	s.Emails, err = ls.notify.OrderEmails(ctx, l, orderID)
	return s, err
}
