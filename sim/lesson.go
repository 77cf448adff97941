package sim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Lesson is one of the article's lessons as the lab plays it: the settings
// it starts from, the actions a learner takes, one by one, and what the
// article says comes of them. The outcome is never computed from the lesson:
// the actions go through the lab's client, network and ledger like anyone's,
// and CheckLesson reads the ledger to compare.
type Lesson struct {
	N        int
	Settings Settings // from the defaults; the lab's seed is kept
	Steps    []Action // "retry" and "race" act on the latest operation
	Expect   Expect
}

// Expect is what the article says a lesson ends with.
type Expect struct {
	Charges int64
	Total   int64
	Orders  []OrderCharges // how many times each order is charged
	Answers []Answer       // what the last attempt of an order's latest operation got
}

// OrderCharges is how many payments an order has.
type OrderCharges struct {
	OrderID string
	Charges int64
}

// Answer is what the server did with the last attempt of an order's latest
// operation.
type Answer struct {
	OrderID string
	Outcome Outcome
}

func lessonSettings(f func(s *Settings)) Settings {
	s := DefaultSettings()
	f(&s)
	return s
}

func charge(order string, fate Fate) Action {
	return Action{Kind: "charge", OrderID: order, Amount: 1500, Fate: fate}
}

func retry(fate Fate) Action {
	yes := true
	return Action{Kind: "retry", WithKey: &yes, Fate: fate}
}

func switchTo(p SettingsPatch) Action { return Action{Kind: "settings", Settings: &p} }

// Lessons are the article's six lessons (SPEC.md, "Lessons"), in order.
func Lessons() []Lesson {
	unique, replay := ProtectUnique, ProtectReplay
	hash, uuid := KeyHash, KeyUUID
	return []Lesson{{
		// The article's first listing: no key, no guard; the answer is lost.
		N: 1,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy = ProtectNone, KeyNone
		}),
		Steps:  []Action{charge("order-42", FateResponseLost), retry(FateOK)},
		Expect: Expect{Charges: 2, Total: 3000, Orders: []OrderCharges{{"order-42", 2}}},
	}, {
		// The second listing: a key the retry reuses, UNIQUE on it.
		N: 2,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy = ProtectUnique, KeyUUID
		}),
		Steps: []Action{charge("order-42", FateResponseLost), retry(FateOK)},
		Expect: Expect{Charges: 1, Total: 1500, Orders: []OrderCharges{{"order-42", 1}},
			Answers: []Answer{{"order-42", OutcomeDuplicate}}},
	}, {
		// SELECT, then INSERT: two retries at once both find nothing. The
		// first request is lost on its way, so there is nothing to find.
		N: 3,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy, s.CheckGapMS = ProtectCheckThenInsert, KeyUUID, 300
		}),
		Steps: []Action{
			charge("order-42", FateRequestLost), {Kind: "race", N: 2},
			switchTo(SettingsPatch{Protection: &unique}),
			charge("order-43", FateRequestLost), {Kind: "race", N: 2},
		},
		Expect: Expect{Charges: 3, Total: 4500, Orders: []OrderCharges{{"order-42", 2}, {"order-43", 1}}},
	}, {
		// A new UUID for every request: the guard sees a new operation each time.
		N: 4,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy, s.Network = ProtectUnique, KeyUUIDPerRequest, FateResponseLost
		}),
		Steps:  []Action{charge("order-42", FateResponseLost), retry(FateResponseLost), retry(FateOK)},
		Expect: Expect{Charges: 3, Total: 4500, Orders: []OrderCharges{{"order-42", 3}}},
	}, {
		// A second, legitimate purchase of the same goods, under three key sources.
		N: 5,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy = ProtectUnique, KeyNatural
		}),
		Steps: []Action{
			charge("order-42", FateOK), charge("order-42", FateOK),
			switchTo(SettingsPatch{KeyStrategy: &hash}),
			charge("order-43", FateOK), charge("order-43", FateOK),
			switchTo(SettingsPatch{KeyStrategy: &uuid}),
			charge("order-44", FateOK), charge("order-44", FateOK),
		},
		Expect: Expect{Charges: 4, Total: 6000,
			Orders:  []OrderCharges{{"order-42", 1}, {"order-43", 1}, {"order-44", 2}},
			Answers: []Answer{{"order-42", OutcomeDuplicate}, {"order-43", OutcomeDuplicate}, {"order-44", OutcomeCharged}}},
	}, {
		// "Already done" is safe; the first answer again is what the client wanted.
		N: 6,
		Settings: lessonSettings(func(s *Settings) {
			s.Protection, s.KeyStrategy = ProtectUnique, KeyUUID
		}),
		Steps: []Action{
			charge("order-42", FateResponseLost), retry(FateOK),
			switchTo(SettingsPatch{Protection: &replay}),
			charge("order-43", FateResponseLost), retry(FateOK),
		},
		Expect: Expect{Charges: 2, Total: 3000,
			Orders:  []OrderCharges{{"order-42", 1}, {"order-43", 1}},
			Answers: []Answer{{"order-42", OutcomeDuplicate}, {"order-43", OutcomeReplayed}}},
	}}
}

// LessonNotSetUp is why a step is refused before the lesson is set up.
const LessonNotSetUp = "must be set up first"

// errNoLesson refuses a step or a set-up when no lesson is open.
var errNoLesson = Invalid(FieldError{Field: "lesson", Detail: "must be chosen first"})

// LessonNumber returns lesson n, or an EInvalid error.
func LessonNumber(n int) (Lesson, error) {
	for _, ls := range Lessons() {
		if ls.N == n {
			return ls, nil
		}
	}
	return Lesson{}, Invalid(FieldError{Field: "lesson", Detail: fmt.Sprintf("must be a lesson from 1 to %d", len(Lessons()))})
}

// LessonState is where a lab is in its lesson: which one (0 for none),
// whether it has been set up, and the number of the next step, from 0.
type LessonState struct {
	N     int
	Ready bool
	Next  int
}

// Lesson returns where the lab is in its lesson.
func (l *Lab) Lesson() LessonState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lesson
}

// ChooseLesson opens lesson n in the lab (0 closes it) without touching its
// ledger or settings: the learner reads first, then sets it up.
func (e *Engine) ChooseLesson(ctx context.Context, l *Lab, n int) error {
	if n != 0 {
		if _, err := LessonNumber(n); err != nil {
			return err
		}
	}
	l.steps.Lock()
	defer l.steps.Unlock()
	if l.Lesson().N == n {
		return nil // a repeated choice changes nothing
	}
	if err := e.saveLesson(ctx, l, LessonState{N: n}); err != nil {
		return err
	}
	e.emit(Event{Lab: l.ID, Kind: EventLesson})
	return nil
}

// SetUpLesson gives the lab its lesson's settings (keeping its seed) and
// empties it, ready for the first step.
func (e *Engine) SetUpLesson(ctx context.Context, l *Lab) error {
	l.steps.Lock()
	defer l.steps.Unlock()
	ls, err := LessonNumber(l.Lesson().N)
	if err != nil {
		return errNoLesson
	}
	if _, err := e.UpdateSettings(ctx, l, patchTo(ls.Settings)); err != nil {
		return err
	}
	if err := e.reset(ctx, l); err != nil { // the scenario starts from the lesson's settings
		return err
	}
	if err := e.saveLesson(ctx, l, LessonState{N: ls.N, Ready: true}); err != nil {
		return err
	}
	e.emit(Event{Lab: l.ID, Kind: EventLesson})
	return nil
}

// StepLesson takes step number at of the lab's lesson, if it is the next one
// and the lesson is set up. A step asked for again (a retried request, or a
// second browser pressing Step at the same moment) is not taken twice:
// ran is false, and nothing changes.
func (e *Engine) StepLesson(ctx context.Context, l *Lab, at int) (ran bool, err error) {
	l.steps.Lock()
	defer l.steps.Unlock()
	st := l.Lesson()
	ls, err := LessonNumber(st.N)
	if err != nil {
		return false, errNoLesson
	}
	switch {
	case at != st.Next:
		return false, nil
	case !st.Ready:
		return false, Invalid(FieldError{Field: "lesson", Detail: LessonNotSetUp})
	case st.Next >= len(ls.Steps):
		return false, nil
	}
	a := ls.Steps[st.Next]
	if err := e.replay(ctx, l, a); err != nil {
		return false, err
	}
	st.Next++
	if err := e.saveLesson(ctx, l, st); err != nil {
		return true, err
	}
	e.emit(Event{Lab: l.ID, Kind: EventLesson})
	return true, nil
}

// saveLesson stores where the lab is in its lesson, then keeps it in memory.
// The caller holds l.steps; l.mu is taken only after the write, never while
// the connection is held.
func (e *Engine) saveLesson(ctx context.Context, l *Lab, st LessonState) error {
	if _, err := e.store.w.ExecContext(ctx, `
INSERT INTO lab_lessons (lab_id, lesson, ready, next) VALUES (?, ?, ?, ?)
ON CONFLICT (lab_id) DO UPDATE SET lesson = excluded.lesson, ready = excluded.ready, next = excluded.next`,
		l.ID, st.N, st.Ready, st.Next); err != nil {
		return fmt.Errorf("lesson: save the place of %s: %w", l.ID, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lesson = st
	return nil
}

// patchTo is the patch that turns any settings into s, apart from the seed.
func patchTo(s Settings) SettingsPatch {
	return SettingsPatch{
		Protection: &s.Protection, KeyStrategy: &s.KeyStrategy, Network: &s.Network,
		Retry: &RetryPatch{Mode: &s.Retry.Mode, MaxAttempts: &s.Retry.MaxAttempts, BaseMS: &s.Retry.BaseMS,
			CapMS: &s.Retry.CapMS, Jitter: &s.Retry.Jitter},
		ClientTimeoutMS: &s.ClientTimeoutMS, ServerDelayMS: &s.ServerDelayMS, CheckGapMS: &s.CheckGapMS,
		KeyTTLS: &s.KeyTTLS, LockTimeoutMS: &s.LockTimeoutMS,
	}
}

// LessonResult is a lesson's outcome as the lab's ledger has it now.
type LessonResult struct {
	Met     bool // the ledger is what the article says
	Done    bool // every step has been taken
	Charges int64
	Total   int64
	Orders  []OrderCharges // the expected orders, with their charges now
	Answers []Answer       // the expected orders' answers now ("" when none yet)
}

// CheckLesson compares the lab's ledger and its operations' answers with
// what the lesson expects.
func (e *Engine) CheckLesson(ctx context.Context, l *Lab, ls Lesson, st LessonState) (LessonResult, error) {
	r := LessonResult{Done: st.Ready && st.Next >= len(ls.Steps)}
	rows, err := e.store.r.QueryContext(ctx,
		`SELECT order_id, COUNT(*), SUM(amount) FROM payments WHERE lab_id = ? GROUP BY order_id`, l.ID)
	if err != nil {
		return r, fmt.Errorf("lesson: ledger of %s: %w", l.ID, err)
	}
	charges := map[string]int64{}
	for rows.Next() {
		var (
			order    string
			n, total int64
		)
		if err := rows.Scan(&order, &n, &total); err != nil {
			rows.Close()
			return r, err
		}
		charges[order] = n
		r.Charges += n
		r.Total += total
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return r, err
	}
	met := r.Charges == ls.Expect.Charges && r.Total == ls.Expect.Total
	for _, o := range ls.Expect.Orders {
		r.Orders = append(r.Orders, OrderCharges{o.OrderID, charges[o.OrderID]})
		met = met && charges[o.OrderID] == o.Charges
	}
	for _, a := range ls.Expect.Answers {
		var got Outcome
		err := e.store.r.QueryRowContext(ctx, `
SELECT a.outcome FROM attempts a JOIN operations o ON o.lab_id = a.lab_id AND o.id = a.op_id
WHERE o.lab_id = ? AND o.order_id = ? ORDER BY o.seq DESC, a.n DESC LIMIT 1`, l.ID, a.OrderID).Scan(&got)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return r, fmt.Errorf("lesson: answers of %s: %w", l.ID, err)
		}
		r.Answers = append(r.Answers, Answer{a.OrderID, got})
		met = met && got == a.Outcome
	}
	r.Met = met
	return r, nil
}
