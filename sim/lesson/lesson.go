// Package lesson plays the article's lessons in a lab: the table of
// lessons (settings, steps, what the article says comes of them), the
// lab's place in its lesson, each step taken once through the lab's own
// client and ledger, and the verdict read from the ledger.
package lesson

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"idemlab/sim"
	"idemlab/sim/client/storm"
	"idemlab/sim/events"
	"idemlab/sim/labs"
	"idemlab/sim/ledger"
	"idemlab/sim/notify"
	"idemlab/sim/scenario"
	"idemlab/sim/store"
)

// The rules a lesson's request may break.
const (
	NotSetUp  = "lesson-setup" // a step before the lesson is set up
	NotChosen = "lesson-open"  // a step or a set-up with no lesson open
)

// errNoLesson refuses a step or a set-up when no lesson is open.
var errNoLesson = sim.Invalid(sim.Broke("lesson", NotChosen))

// All returns the lessons, in order.
func All() []Lesson { return table }

// Number returns lesson n, or an EInvalid error.
func Number(n int) (Lesson, error) {
	for _, ls := range table {
		if ls.N == n {
			return ls, nil
		}
	}
	return Lesson{}, sim.Invalid(sim.Broke("lesson", "lesson-number", len(table)))
}

// Lessons play the lessons in the labs.
type Lessons struct {
	store  *store.Store
	labs   *labs.Registry
	player *scenario.Scenarios
	ledger *ledger.Ledger
	notify *notify.Notifier
	storms *storm.Storms
	bus    *events.Bus
	log    *slog.Logger
}

// New returns the lessons of the labs, their steps played by player.
func New(s *store.Store, reg *labs.Registry, player *scenario.Scenarios, g *ledger.Ledger, n *notify.Notifier, st *storm.Storms, bus *events.Bus, log *slog.Logger) *Lessons {
	return &Lessons{store: s, labs: reg, player: player, ledger: g, notify: n, storms: st, bus: bus, log: log}
}

// Room is the lesson's part in a lab's life: a reset asks for a new set-up.
func (ls *Lessons) Room() labs.Room {
	return labs.Tables{Store: ls.store, Resets: []string{`UPDATE lab_lessons SET ready = (1 = 0), next = 0 WHERE lab_id = ?1`}}
}

// Choose opens lesson n in the lab (0 closes it) without touching its
// ledger or settings: the learner reads first, then sets it up.
func (ls *Lessons) Choose(ctx context.Context, l *labs.Lab, n int) error {
	if n != 0 {
		if _, err := Number(n); err != nil {
			return err
		}
	}
	release, err := l.TakeTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	if ls.place(ctx, l).N == n {
		return nil // a repeated choice changes nothing
	}
	return ls.save(ctx, l, sim.LessonState{N: n})
}

// SetUp gives the lab its lesson's settings (keeping its seed) and empties
// it, ready for the first step.
func (ls *Lessons) SetUp(ctx context.Context, l *labs.Lab) error {
	release, err := l.TakeTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	lesson, err := Number(ls.place(ctx, l).N)
	if err != nil {
		return errNoLesson
	}
	if lesson.Postgres && !ls.store.Postgres() {
		return sim.Invalid(sim.Broke("lesson", sim.PostgresOnly))
	}
	if _, err := ls.labs.UpdateSettings(ctx, l, patchTo(lesson.Settings)); err != nil {
		return err
	}
	if err := ls.labs.ResetInTurn(ctx, l); err != nil { // the scenario starts from the lesson's settings
		return err
	}
	return ls.save(ctx, l, sim.LessonState{N: lesson.N, Ready: true})
}

// Step takes step number at of the lab's lesson, if it is the next one and
// the lesson is set up. A step asked for again (a retried request, or a
// second browser pressing Step at the same moment, through this process or
// another) is not taken twice: ran is false, and nothing changes. The step
// is claimed in the database before it runs, and given back if it fails.
// It returns once what it caused has settled (effects): the emails of its
// charges, a redelivery included.
func (ls *Lessons) Step(ctx context.Context, l *labs.Lab, at int) (ran bool, err error) {
	release, err := l.TakeTurn(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	st := ls.place(ctx, l)
	lesson, err := Number(st.N)
	if err != nil {
		return false, errNoLesson
	}
	switch {
	case at != st.Next:
		return false, nil
	case !st.Ready:
		return false, sim.Invalid(sim.Broke("lesson", NotSetUp))
	case st.Next >= len(lesson.Steps):
		return false, nil
	}
	step := lesson.Steps[st.Next]
	fx, err := ls.watch(ctx, l, step)
	if err != nil {
		return false, err
	}
	if ok, err := ls.move(ctx, l, st.Next, st.Next+1); !ok || err != nil {
		fx.stop()
		return false, err
	}
	if err := ls.player.Play(ctx, l, step); err != nil {
		fx.stop()
		if _, err := ls.move(context.WithoutCancel(ctx), l, st.Next+1, st.Next); err != nil {
			ls.log.Warn("lesson: give the step back", "lab", l.ID, "err", err)
		}
		return false, err
	}
	st.Next++
	ls.bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventLesson, Lesson: &st})
	if err := fx.settle(ctx); err != nil && ctx.Err() == nil { // the step is taken: it answers as things stand
		ls.log.Warn("lesson: wait for the step's effects", "lab", l.ID, "err", err)
	}
	return true, nil
}

// errMoved is what move's transaction fails with when the lesson is no
// longer where the step expected it.
var errMoved = errors.New("lesson: moved meanwhile")

// move moves the lab's lesson from step from to step to, in one
// transaction that reads where the lesson is: of two requests for one
// step, in any processes, one moves it (ok) and the other finds it moved.
func (ls *Lessons) move(ctx context.Context, l *labs.Lab, from, to int) (ok bool, err error) {
	_, _, err = ls.labs.ChangeAside(ctx, l, func(tx *store.Tx, cur labs.State) error {
		if !cur.Lesson.Ready || cur.Lesson.Next != from {
			return errMoved
		}
		_, err := tx.Exec(`UPDATE lab_lessons SET next = ? WHERE lab_id = ?`, to, l.ID)
		return err
	})
	if errors.Is(err, errMoved) {
		ls.labs.Reload(ctx, l.ID)
		return false, nil
	}
	if err != nil && sim.ErrorCode(err) == sim.EInternal {
		return false, fmt.Errorf("lesson: take the step of %s: %w", l.ID, err)
	}
	return err == nil, err
}

// place is where the lab is in its lesson: as this process keeps it, or,
// when other processes share the database, as stored (one of them may
// have moved it a moment ago).
func (ls *Lessons) place(ctx context.Context, l *labs.Lab) sim.LessonState {
	if ls.store.Postgres() {
		ls.labs.Reload(ctx, l.ID)
	}
	return l.Lesson()
}

// save stores where the lab is in its lesson and tells its pages; the
// caller has the lab's turn.
func (ls *Lessons) save(ctx context.Context, l *labs.Lab, st sim.LessonState) error {
	_, _, err := ls.labs.Change(ctx, l, func(tx *store.Tx, _ labs.State) error {
		_, err := tx.Exec(`
INSERT INTO lab_lessons (lab_id, lesson, ready, next) VALUES (?, ?, ?, ?)
ON CONFLICT (lab_id) DO UPDATE SET lesson = excluded.lesson, ready = excluded.ready, next = excluded.next`,
			l.ID, st.N, st.Ready, st.Next)
		return err
	})
	if err != nil {
		return labs.Failed(l.ID, "lesson: save the place of "+l.ID, err)
	}
	ls.bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventLesson, Lesson: &st})
	return nil
}

// patchTo is the patch that turns any settings into s, apart from the seed.
func patchTo(s sim.Settings) sim.SettingsPatch {
	return sim.SettingsPatch{
		Protection: &s.Protection, KeyStrategy: &s.KeyStrategy, Network: &s.Network,
		Retry: &sim.RetryPatch{Mode: &s.Retry.Mode, MaxAttempts: &s.Retry.MaxAttempts, BaseMS: &s.Retry.BaseMS,
			CapMS: &s.Retry.CapMS, Jitter: &s.Retry.Jitter, Budget: &s.Retry.Budget, MaxTokens: &s.Retry.MaxTokens,
			TokenRatio: &s.Retry.TokenRatio, BudgetPercent: &s.Retry.BudgetPercent, RespectRetryAfter: &s.Retry.RespectRetryAfter},
		CapacityRPS: &s.CapacityRPS, ClientTimeoutMS: &s.ClientTimeoutMS, ServerDelayMS: &s.ServerDelayMS, CheckGapMS: &s.CheckGapMS, Isolation: &s.Isolation,
		KeyTTLS: &s.KeyTTLS, LockTimeoutMS: &s.LockTimeoutMS, ServerFault: &s.ServerFault,
		Notify: &s.Notify, Delivery: &s.Delivery, ConsumerDedup: &s.ConsumerDedup, PublishDedup: &s.PublishDedup,
		AckWaitMS: &s.AckWaitMS,
	}
}
