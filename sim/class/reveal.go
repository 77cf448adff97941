package class

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// Reveal closes the vote on the latest question, runs its step (unless it
// ran already: a lesson's step is taken once, whoever asks), measures what
// it did, and reveals. A reveal asked again answers the question as it
// stands: revealed, or still running in another request.
func (cs *Classes) Reveal(ctx context.Context, l *labs.Lab, teacher string) (Question, error) {
	n, run, err := cs.closeVote(ctx, l, teacher)
	if err != nil {
		return Question{}, failed(l.ID, "reveal", err)
	}
	if !run {
		return cs.question(ctx, l.ID, n)
	}
	cs.changed(l.ID)
	q, err := cs.question(ctx, l.ID, n)
	if err != nil {
		return q, err
	}
	if err := cs.run(ctx, l, q); err != nil {
		// The step did not run: a retried reveal runs it at once.
		_, undo := cs.store.Exec(context.WithoutCancel(ctx), `UPDATE class_questions SET run_until = 0 WHERE lab_id = ? AND n = ?`, l.ID, n)
		return q, errors.Join(err, undo)
	}
	seen, err := cs.lessons.Observe(ctx, l, q.Order)
	if err != nil {
		return q, err
	}
	b, _ := json.Marshal(seen)
	now := cs.clock.Now().UnixMilli()
	if _, err := cs.store.Exec(ctx, `UPDATE class_questions SET state = ?, seen = ?, revealed_at = ? WHERE lab_id = ? AND n = ? AND state = ?`,
		Revealed, string(b), now, l.ID, n, Running); err != nil {
		return q, fmt.Errorf("class: reveal question %d of %s: %w", n, l.ID, err)
	}
	cs.changed(l.ID)
	return cs.question(ctx, l.ID, n)
}

// closeVote closes the vote on the lab's latest question: run says that
// this request is to run its step (it closed the vote, or took over a run
// that ran out of time); n is the question.
func (cs *Classes) closeVote(ctx context.Context, l *labs.Lab, teacher string) (n int, run bool, err error) {
	now := cs.clock.Now().UnixMilli()
	err = cs.store.Write(ctx, func(tx *store.Tx) error {
		if err := cs.steers(tx, l.ID, teacher, now); err != nil {
			return err
		}
		if err := tx.QueryRow(`SELECT asked FROM classes WHERE lab_id = ?`, l.ID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return sim.Invalid(sim.Broke("class", RuleNoQuestion))
		}
		// The vote's and the reveal's writes meet on the question's row:
		// a vote waiting for it finds the vote closed.
		res, err := tx.Exec(`UPDATE class_questions SET state = ?, run_until = ? WHERE lab_id = ? AND n = ?
AND (state = ? OR state = ? AND run_until <= ?)`, Running, now+runFor.Milliseconds(), l.ID, n, Open, Running, now)
		if err != nil {
			return err
		}
		k, err := res.RowsAffected()
		run = k == 1
		return err
	})
	return n, run, err
}

// run takes the question's step: the lesson's (taken once, whoever asks:
// a step the teacher took already is not taken again), or the action.
func (cs *Classes) run(ctx context.Context, l *labs.Lab, q Question) error {
	if q.Lesson == 0 {
		return cs.player.Play(ctx, l, q.Action)
	}
	_, err := cs.lessons.Step(ctx, l, q.Step)
	return err
}

// Report is every question the lab's class asked, in order, each as it
// stands.
func (cs *Classes) Report(ctx context.Context, l *labs.Lab) (Class, []Question, error) {
	c, err := cs.Get(ctx, l)
	if err != nil {
		return c, nil, err
	}
	var qs []Question
	for n := 1; n <= c.Asked; n++ {
		q, err := cs.question(ctx, l.ID, n)
		if err != nil {
			return c, nil, err
		}
		qs = append(qs, q)
	}
	return c, qs, nil
}
