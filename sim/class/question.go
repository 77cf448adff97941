package class

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/lesson"
	"idemlab/sim/store"
)

// The states of a question.
const (
	Open     = "open"     // votes are taken
	Running  = "running"  // the vote is closed, the step on its way
	Revealed = "revealed" // the step ran; what it did is known
)

// RuleNoQuestion refuses a reveal when nothing was asked.
const RuleNoQuestion = "class-no-question"

// runFor is how long a reveal's run of the step may take before another
// reveal (a retry, through any process) may run it in its place.
const runFor = 2 * time.Minute

// Question is one question of a class: what it asks about (a lesson's step,
// or an action outside lessons), its choices, its votes, and, once the step
// ran, what the step did and the choice that made right.
type Question struct {
	N      int
	Lesson int // 0: the generic question
	Step   int // the lesson's step, from 0
	Action sim.Action
	Ask
	Order  string
	State  string
	Votes  int            // how many voted
	Counts map[string]int // the votes per choice; only once revealed
	Right  string         // once revealed: the right choice ("" none of them)
	Asked  lesson.Seen    // measured when asked
	Seen   lesson.Seen    // measured after the step
}

// Share is the share of the votes that predicted the right choice, in
// percent, rounded; 0 without votes.
func (q Question) Share() int {
	if q.Right == "" {
		return 0
	}
	return q.Percent(q.Right)
}

// Percent is the share of the votes for a choice, in percent, rounded; 0
// without votes, and before the reveal (no split is known then).
func (q Question) Percent(choice string) int {
	if q.Votes == 0 {
		return 0
	}
	return (q.Counts[choice]*100 + q.Votes/2) / q.Votes
}

// question reads question n of the lab's class, with its votes.
func (cs *Classes) question(ctx context.Context, lab string, n int) (Question, error) {
	q := Question{N: n}
	var action, choices, asked, seen string
	err := cs.store.QueryRow(ctx, `
SELECT lesson, step, action, measure, order_id, choices, state, before, seen
FROM class_questions WHERE lab_id = ? AND n = ?`, lab, n).
		Scan(&q.Lesson, &q.Step, &action, &q.Measure, &q.Order, &choices, &q.State, &asked, &seen)
	if err != nil {
		return q, fmt.Errorf("class: read question %d of %s: %w", n, lab, err)
	}
	q.Choices = strings.Split(choices, ",")
	if err := errors.Join(json.Unmarshal([]byte(action), &q.Action), json.Unmarshal([]byte(asked), &q.Asked)); err != nil {
		return q, fmt.Errorf("class: read question %d of %s: %w", n, lab, err)
	}
	counts, err := cs.votes(ctx, lab, n)
	if err != nil {
		return q, err
	}
	for _, v := range counts {
		q.Votes += v
	}
	if q.State == Revealed {
		if err := json.Unmarshal([]byte(seen), &q.Seen); err != nil {
			return q, fmt.Errorf("class: read question %d of %s: %w", n, lab, err)
		}
		q.Counts, q.Right = counts, q.Ask.Right(q.Asked, q.Seen)
	}
	return q, nil
}

// votes counts the votes of question n per choice.
func (cs *Classes) votes(ctx context.Context, lab string, n int) (map[string]int, error) {
	rows, err := cs.store.Query(ctx, `SELECT choice, count(*) FROM class_votes WHERE lab_id = ? AND n = ? GROUP BY choice`, lab, n)
	if err != nil {
		return nil, fmt.Errorf("class: count the votes of %s: %w", lab, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var c string
		var v int
		if err := rows.Scan(&c, &v); err != nil {
			return nil, err
		}
		out[c] = v
	}
	return out, rows.Err()
}

// Open asks the class a question: about the next step of the lab's lesson
// (act nil), or the generic one about act, an action outside lessons.
// Asked again while its question is open (a retried request), it changes
// nothing; another question while one is open is refused.
func (cs *Classes) Open(ctx context.Context, l *labs.Lab, teacher string, act *sim.Action) (Question, error) {
	q, err := cs.toAsk(ctx, l, act)
	if err != nil {
		return q, err
	}
	if q.Asked, err = cs.lessons.Observe(ctx, l, q.Order); err != nil {
		return q, err
	}
	action, _ := json.Marshal(q.Action)
	asked, _ := json.Marshal(q.Asked)
	now := cs.clock.Now().UnixMilli()
	same := false
	err = cs.store.Write(ctx, func(tx *store.Tx) error {
		if err := cs.steers(tx, l.ID, teacher, now); err != nil {
			return err
		}
		var n, lsn, step int
		var was string
		state := Revealed
		err := tx.QueryRow(`
SELECT c.asked, coalesce(q.lesson, 0), coalesce(q.step, 0), coalesce(q.action, ''), coalesce(q.state, ?)
FROM classes c LEFT JOIN class_questions q ON q.lab_id = c.lab_id AND q.n = c.asked
WHERE c.lab_id = ?`, Revealed, l.ID).Scan(&n, &lsn, &step, &was, &state)
		switch {
		case err != nil:
			return err
		case state != Revealed && lsn == q.Lesson && step == q.Step && was == string(action):
			same, q.N = true, n // the same question again: a retried request
			return nil
		case state != Revealed:
			return sim.Invalid(sim.Broke("class", RuleOpen))
		case n >= MaxQuestions:
			return sim.Invalid(sim.Broke("class", RuleMany, MaxQuestions))
		}
		q.N = n + 1
		if _, err := tx.Exec(`
INSERT INTO class_questions (lab_id, n, lesson, step, action, measure, order_id, choices, state, before, asked_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			l.ID, q.N, q.Lesson, q.Step, string(action), string(q.Measure), q.Order, strings.Join(q.Choices, ","), Open, string(asked), now); err != nil {
			return err
		}
		_, err = tx.Exec(`UPDATE classes SET asked = ? WHERE lab_id = ?`, q.N, l.ID)
		return err
	})
	if err != nil {
		return q, failed(l.ID, "ask", err)
	}
	if !same {
		cs.changed(l.ID)
	}
	return cs.question(ctx, l.ID, q.N)
}

// toAsk is the question to ask before act, or before the lesson's next step.
func (cs *Classes) toAsk(ctx context.Context, l *labs.Lab, act *sim.Action) (Question, error) {
	if act != nil {
		switch act.Kind {
		case "charge", "retry", "race":
		default:
			return Question{}, sim.Invalid(sim.Broke("action", "class-action"))
		}
		return Question{Action: *act, Ask: GenericAsk()}, nil
	}
	if cs.store.Postgres() {
		cs.labs.Reload(ctx, l.ID) // another process may have moved the lesson
	}
	st := l.Lesson()
	ls, err := lesson.Number(st.N)
	if err != nil || !st.Ready {
		return Question{}, sim.Invalid(sim.Broke("class", RuleNoStep))
	}
	a, order, ok := StepAsk(ls, st.Next)
	if !ok {
		return Question{}, sim.Invalid(sim.Broke("class", RuleNoStep))
	}
	return Question{Lesson: ls.N, Step: st.Next, Action: ls.Steps[st.Next], Ask: a, Order: order}, nil
}
