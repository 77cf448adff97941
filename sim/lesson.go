package sim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// LessonNotSetUp is the rule a step breaks before the lesson is set up.
const LessonNotSetUp = "lesson-setup"

// LessonNotChosen is the rule a step or a set-up breaks when no lesson is open.
const LessonNotChosen = "lesson-open"

// errNoLesson refuses a step or a set-up when no lesson is open.
var errNoLesson = Invalid(Broke("lesson", LessonNotChosen))

// LessonNumber returns lesson n, or an EInvalid error.
func LessonNumber(n int) (Lesson, error) {
	for _, ls := range Lessons() {
		if ls.N == n {
			return ls, nil
		}
	}
	return Lesson{}, Invalid(Broke("lesson", "lesson-number", len(Lessons())))
}

// LessonState is where a lab is in its lesson: which one (0 for none),
// whether it has been set up, and the number of the next step, from 0.
type LessonState struct {
	N     int
	Ready bool
	Next  int
}

// ChooseLesson opens lesson n in the lab (0 closes it) without touching its
// ledger or settings: the learner reads first, then sets it up.
func (e *Engine) ChooseLesson(ctx context.Context, l *Lab, n int) error {
	if n != 0 {
		if _, err := LessonNumber(n); err != nil {
			return err
		}
	}
	release, err := l.takeTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	if e.lesson(ctx, l).N == n {
		return nil // a repeated choice changes nothing
	}
	st := LessonState{N: n}
	if err := e.saveLesson(ctx, l, st); err != nil {
		return err
	}
	e.emit(Event{Lab: l.ID, Kind: EventLesson, Lesson: &st})
	return nil
}

// SetUpLesson gives the lab its lesson's settings (keeping its seed) and
// empties it, ready for the first step.
func (e *Engine) SetUpLesson(ctx context.Context, l *Lab) error {
	release, err := l.takeTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	ls, err := LessonNumber(e.lesson(ctx, l).N)
	if err != nil {
		return errNoLesson
	}
	if ls.Postgres && !e.store.postgres() {
		return Invalid(Broke("lesson", PostgresOnly))
	}
	if _, err := e.UpdateSettings(ctx, l, patchTo(ls.Settings)); err != nil {
		return err
	}
	if err := e.reset(ctx, l); err != nil { // the scenario starts from the lesson's settings
		return err
	}
	st := LessonState{N: ls.N, Ready: true}
	if err := e.saveLesson(ctx, l, st); err != nil {
		return err
	}
	e.emit(Event{Lab: l.ID, Kind: EventLesson, Lesson: &st})
	return nil
}

// StepLesson takes step number at of the lab's lesson, if it is the next one
// and the lesson is set up. A step asked for again (a retried request, or a
// second browser pressing Step at the same moment, through this process or
// another) is not taken twice: ran is false, and nothing changes. The step
// is claimed in the database before it runs, and given back if it fails.
func (e *Engine) StepLesson(ctx context.Context, l *Lab, at int) (ran bool, err error) {
	release, err := l.takeTurn(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	st := e.lesson(ctx, l)
	ls, err := LessonNumber(st.N)
	if err != nil {
		return false, errNoLesson
	}
	switch {
	case at != st.Next:
		return false, nil
	case !st.Ready:
		return false, Invalid(Broke("lesson", LessonNotSetUp))
	case st.Next >= len(ls.Steps):
		return false, nil
	}
	a := ls.Steps[st.Next]
	if ok, err := e.moveStep(ctx, l, st.Next, st.Next+1); !ok || err != nil {
		return false, err
	}
	if err := e.replay(ctx, l, a); err != nil {
		if _, err := e.moveStep(context.WithoutCancel(ctx), l, st.Next+1, st.Next); err != nil {
			e.log.Warn("lesson: give the step back", "lab", l.ID, "err", err)
		}
		return false, err
	}
	st.Next++
	e.emit(Event{Lab: l.ID, Kind: EventLesson, Lesson: &st})
	return true, nil
}

// errMoved is what moveStep's transaction fails with when the lesson is
// no longer where the step expected it.
var errMoved = errors.New("lesson: moved meanwhile")

// moveStep moves the lab's lesson from step from to step to, in one
// transaction that reads where the lesson is: of two requests for one
// step, in any processes, one moves it (ok) and the other finds it moved.
func (e *Engine) moveStep(ctx context.Context, l *Lab, from, to int) (ok bool, err error) {
	_, _, err = e.change(ctx, l, func(tx *sql.Tx, cur labState) error {
		if !cur.lesson.Ready || cur.lesson.Next != from {
			return errMoved
		}
		_, err := tx.ExecContext(ctx, `UPDATE lab_lessons SET next = ? WHERE lab_id = ?`, to, l.ID)
		return err
	})
	if errors.Is(err, errMoved) {
		e.reload(ctx, l.ID)
		return false, nil
	}
	if err != nil && ErrorCode(err) == EInternal {
		return false, fmt.Errorf("lesson: take the step of %s: %w", l.ID, err)
	}
	return err == nil, err
}

// lesson is where the lab is in its lesson: as this process keeps it, or,
// when other processes share the database, as stored (one of them may
// have moved it a moment ago).
func (e *Engine) lesson(ctx context.Context, l *Lab) LessonState {
	if e.store.postgres() {
		e.reload(ctx, l.ID)
	}
	return l.Lesson()
}

// saveLesson stores where the lab is in its lesson; the caller has the
// lab's turn.
func (e *Engine) saveLesson(ctx context.Context, l *Lab, st LessonState) error {
	_, _, err := e.change(ctx, l, func(tx *sql.Tx, _ labState) error {
		_, err := tx.ExecContext(ctx, `
INSERT INTO lab_lessons (lab_id, lesson, ready, next) VALUES (?, ?, ?, ?)
ON CONFLICT (lab_id) DO UPDATE SET lesson = excluded.lesson, ready = excluded.ready, next = excluded.next`,
			l.ID, st.N, st.Ready, st.Next)
		return err
	})
	if err != nil && ErrorCode(err) == EInternal {
		return fmt.Errorf("lesson: save the place of %s: %w", l.ID, err)
	}
	return err
}

// patchTo is the patch that turns any settings into s, apart from the seed.
func patchTo(s Settings) SettingsPatch {
	return SettingsPatch{
		Protection: &s.Protection, KeyStrategy: &s.KeyStrategy, Network: &s.Network,
		Retry: &RetryPatch{Mode: &s.Retry.Mode, MaxAttempts: &s.Retry.MaxAttempts, BaseMS: &s.Retry.BaseMS,
			CapMS: &s.Retry.CapMS, Jitter: &s.Retry.Jitter},
		ClientTimeoutMS: &s.ClientTimeoutMS, ServerDelayMS: &s.ServerDelayMS, CheckGapMS: &s.CheckGapMS, Isolation: &s.Isolation,
		KeyTTLS: &s.KeyTTLS, LockTimeoutMS: &s.LockTimeoutMS, ServerFault: &s.ServerFault,
		Notify: &s.Notify, Delivery: &s.Delivery, ConsumerDedup: &s.ConsumerDedup, PublishDedup: &s.PublishDedup,
		AckWaitMS: &s.AckWaitMS,
	}
}

// The states of a lab's lesson, as the API and the panel name them.
const (
	LessonIdle    = "idle"    // no lesson open, or not set up
	LessonPending = "pending" // set up, steps still to take
	LessonMet     = "met"     // the ledger is what the article says
	LessonDiffers = "differs" // every step taken, and the ledger is not
)

// LessonResult is a lesson's outcome as the lab's ledger has it now.
type LessonResult struct {
	State   string // LessonIdle, LessonPending, LessonMet or LessonDiffers
	Met     bool   // the ledger is what the article says
	Charges int64
	Total   int64
	Orders  []OrderCharges // the expected orders, with their charges now
	Answers []Answer       // the expected orders' answers now ("" when none yet)
	Emails  []OrderEmails  // the expected orders, with their emails now
}

// CheckLesson compares the lab's ledger and its operations' answers with
// what the lesson expects, and says where the lab stands in it (st). It
// reads the lab's counts and the expected orders only: its cost does not
// grow with the lab.
func (e *Engine) CheckLesson(ctx context.Context, l *Lab, ls Lesson, st LessonState) (LessonResult, error) {
	r, err := e.checkLesson(ctx, l, ls)
	switch {
	case err != nil:
	case r.Met:
		r.State = LessonMet
	case !st.Ready:
		r.State = LessonIdle
	case st.Next >= len(ls.Steps):
		r.State = LessonDiffers
	default:
		r.State = LessonPending
	}
	return r, err
}

func (e *Engine) checkLesson(ctx context.Context, l *Lab, ls Lesson) (LessonResult, error) {
	var r LessonResult
	t, err := e.Totals(ctx, l)
	if err != nil {
		return r, err
	}
	r.Charges, r.Total = t.Payments, t.Total
	met := r.Charges == ls.Expect.Charges && r.Total == ls.Expect.Total
	for _, o := range ls.Expect.Orders {
		var n int64
		err := e.store.r.QueryRowContext(ctx, `SELECT charges FROM order_stats WHERE lab_id = ? AND order_id = ?`, l.ID, o.OrderID).Scan(&n)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return r, fmt.Errorf("lesson: ledger of %s: %w", l.ID, err)
		}
		r.Orders = append(r.Orders, OrderCharges{o.OrderID, n})
		met = met && n == o.Charges
	}
	for _, a := range ls.Expect.Answers {
		var got Outcome
		err := e.store.r.QueryRowContext(ctx, `
SELECT a.outcome FROM attempts a
WHERE a.lab_id = ?1 AND a.op_id = (SELECT id FROM operations WHERE lab_id = ?1 AND order_id = ?2 ORDER BY seq DESC LIMIT 1)
ORDER BY a.n DESC LIMIT 1`, l.ID, a.OrderID).Scan(&got)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return r, fmt.Errorf("lesson: answers of %s: %w", l.ID, err)
		}
		r.Answers = append(r.Answers, Answer{a.OrderID, got})
		met = met && got == a.Outcome
	}
	for _, o := range ls.Expect.Emails {
		var n int64
		err := e.store.r.QueryRowContext(ctx, `SELECT emails FROM email_stats WHERE lab_id = ? AND order_id = ?`, l.ID, o.OrderID).Scan(&n)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return r, fmt.Errorf("lesson: mailbox of %s: %w", l.ID, err)
		}
		r.Emails = append(r.Emails, OrderEmails{o.OrderID, n})
		met = met && n == o.Emails
	}
	r.Met = met
	return r, nil
}
