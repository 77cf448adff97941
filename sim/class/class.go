// Package class is a class on a lab: the teacher opens a question before a
// step, the students vote on their phones, the step runs through the lab's
// own client and ledger, and what it did decides which choice was right
// (SPEC, "Predict, then see"). A class lives in the database (the
// classes, class_questions and class_votes tables), so that every process
// on one database sees the same votes; a vote and the reveal meet on the
// question's row, so no vote is taken once the vote is closed.
package class

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/labs"
	"idemlab/sim/lesson"
	"idemlab/sim/scenario"
	"idemlab/sim/store"
)

// Lasts is how long a class runs unless the teacher ends it earlier.
const Lasts = 3 * time.Hour

// Limits of one class: its questions, and the voters of one question.
const (
	MaxQuestions = 200
	MaxVoters    = 2000
)

// The rules a class's request may break (sim.FieldError rules).
const (
	RuleTeacher  = "class-teacher"  // only the browser that started the class steers it
	RuleNone     = "class-none"     // the lab has no class running
	RuleOpen     = "class-question" // a question is open: run its step first
	RuleNoStep   = "class-no-step"  // nothing to ask about: no lesson step with a question is next
	RuleChoice   = "class-choice"   // the vote names no choice of the question
	RuleQuestion = "class-current"  // the vote is for a question that is not the current one
	RuleMany     = "class-many"     // the class has asked its most questions
)

// Classes keeps the labs' classes.
type Classes struct {
	store   *store.Store
	labs    *labs.Registry
	lessons *lesson.Lessons
	player  *scenario.Scenarios
	bus     *events.Bus
	clock   clock.Clock
	log     *slog.Logger
	phones  *phoneCache
}

// New returns the classes of the labs; their steps run through lessons
// and player, the lab's own.
func New(s *store.Store, reg *labs.Registry, ls *lesson.Lessons, player *scenario.Scenarios, bus *events.Bus, c clock.Clock, log *slog.Logger) *Classes {
	return &Classes{store: s, labs: reg, lessons: ls, player: player, bus: bus, clock: c, log: log, phones: newPhoneCache(c.Now)}
}

// Room is the class's part in a lab's life: a class outlives the lab's
// resets (a lesson's set-up is one), and goes with the lab.
func (cs *Classes) Room() labs.Room {
	return labs.Tables{Store: cs.store, Purges: []string{
		`DELETE FROM class_votes WHERE (lab_id, n, voter) IN (SELECT lab_id, n, voter FROM class_votes WHERE lab_id = ?1 LIMIT ?2)`,
		`DELETE FROM class_questions WHERE (lab_id, n) IN (SELECT lab_id, n FROM class_questions WHERE lab_id = ?1 LIMIT ?2)`,
		`DELETE FROM classes WHERE lab_id = ?1 AND ?2 > 0`,
	}}
}

// Class is a lab's class as its teacher's page shows it.
type Class struct {
	Lab      string
	Code     string
	Origin   string // where phones join: scheme and host
	Started  time.Time
	Ends     time.Time
	Ended    bool      // closed by the teacher, or past its time
	Asked    int       // questions asked so far
	Question *Question // the latest, nil before the first
	teacher  string    // the hash of its teacher's token
}

// SteeredBy reports whether the browser holding the token started the
// class, and the class still runs: that browser's page shows the class's
// controls, any other's says who steers it.
func (c Class) SteeredBy(token string) bool {
	return !c.Ended && token != "" && subtle.ConstantTimeCompare([]byte(c.teacher), []byte(hash(token))) == 1
}

// Token is a new teacher's token: the secret of the browser that starts
// classes, kept in its cookie.
func Token() string { return rand.Text() }

// hash is what the database keeps of a teacher's token.
func hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// codeLetters are a join code's letters: no 0/O, 1/I/L to mistake.
const codeLetters = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// CodeLen is a join code's length.
const CodeLen = 6

func newCode() string {
	b := make([]byte, CodeLen)
	for i := range b {
		var r [1]byte
		for {
			rand.Read(r[:])
			if int(r[0]) < 256-256%len(codeLetters) { // no letter more likely than another
				break
			}
		}
		b[i] = codeLetters[int(r[0])%len(codeLetters)]
	}
	return string(b)
}

// Start starts a class on the lab for the teacher's token. Asked again by
// the same teacher while the class runs, it changes nothing and answers
// the class (created false): a retried start is safe. origin is where the
// students' phones join (scheme and host). A class of another
// teacher that still runs refuses it; one that ended makes way.
func (cs *Classes) Start(ctx context.Context, l *labs.Lab, teacher, origin string) (c Class, created bool, err error) {
	now := cs.clock.Now()
	for range 5 { // a join code already taken: another
		err = cs.store.Write(ctx, func(tx *store.Tx) error {
			var who string
			var ends int64
			err := tx.QueryRow(`SELECT teacher, ends_at FROM classes WHERE lab_id = ?`, l.ID).Scan(&who, &ends)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			case ends > now.UnixMilli() && who == hash(teacher):
				created = false
				return nil
			case ends > now.UnixMilli():
				return sim.Errorf(sim.EForbidden, "class-taken")
			default:
				if _, err := tx.Exec(`DELETE FROM classes WHERE lab_id = ?`, l.ID); err != nil {
					return err
				}
			}
			created = true
			_, err = tx.Exec(`INSERT INTO classes (lab_id, code, teacher, origin, started_at, ends_at) VALUES (?, ?, ?, ?, ?, ?)`,
				l.ID, newCode(), hash(teacher), origin, now.UnixMilli(), now.Add(Lasts).UnixMilli())
			return err
		})
		if err == nil || !store.IsUnique(err) {
			break
		}
	}
	if err != nil {
		return Class{}, false, failed(l.ID, "start", err)
	}
	if created {
		cs.changed(l.ID)
	}
	c, err = cs.Get(ctx, l)
	return c, created, err
}

// End ends the lab's class; what it asked stays for the take-home report
// until the lab goes or another class starts. Ending a class that ended
// already changes nothing.
func (cs *Classes) End(ctx context.Context, l *labs.Lab, teacher string) error {
	now := cs.clock.Now().UnixMilli()
	err := cs.store.Write(ctx, func(tx *store.Tx) error {
		if err := cs.steers(tx, l.ID, teacher, now); err != nil {
			return err
		}
		_, err := tx.Exec(`UPDATE classes SET ends_at = ? WHERE lab_id = ?`, now, l.ID)
		return err
	})
	if sim.ErrorCode(err) == sim.EInvalid && ruleOf(err) == RuleNone {
		return nil
	}
	if err != nil {
		return failed(l.ID, "end", err)
	}
	cs.changed(l.ID)
	return nil
}

// steers checks, in tx, that the lab's class runs and that teacher started it.
func (cs *Classes) steers(tx *store.Tx, lab, teacher string, now int64) error {
	var who string
	var ends int64
	err := tx.QueryRow(`SELECT teacher, ends_at FROM classes WHERE lab_id = ?`, lab).Scan(&who, &ends)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err == nil && ends <= now:
		return sim.Invalid(sim.Broke("class", RuleNone))
	case err != nil:
		return err
	case who != hash(teacher):
		return sim.Errorf(sim.EForbidden, "class-teacher")
	}
	return nil
}

// Get reads the lab's class with its latest question; ENotFound when the
// lab never had one.
func (cs *Classes) Get(ctx context.Context, l *labs.Lab) (Class, error) {
	c := Class{Lab: l.ID}
	var started, ends int64
	err := cs.store.QueryRow(ctx, `SELECT code, origin, started_at, ends_at, asked, teacher FROM classes WHERE lab_id = ?`, l.ID).
		Scan(&c.Code, &c.Origin, &started, &ends, &c.Asked, &c.teacher)
	if errors.Is(err, sql.ErrNoRows) {
		return c, sim.Errorf(sim.ENotFound, "no-class")
	}
	if err != nil {
		return c, fmt.Errorf("class: read the class of %s: %w", l.ID, err)
	}
	c.Started, c.Ends = time.UnixMilli(started), time.UnixMilli(ends)
	c.Ended = !c.Ends.After(cs.clock.Now())
	if c.Asked > 0 {
		q, err := cs.question(ctx, l.ID, c.Asked)
		if err != nil {
			return c, err
		}
		c.Question = &q
	}
	return c, nil
}

// changed tells the lab's pages that its class changed.
func (cs *Classes) changed(lab string) {
	cs.phones.forget(lab)
	cs.bus.Publish(sim.Event{Lab: lab, Kind: sim.EventClass})
}

// failed wraps an error of the store with what the class was doing; the
// lab's own refusals pass as they are (labs.Failed).
func failed(lab, doing string, err error) error {
	return labs.Failed(lab, "class: "+doing+" the class of "+lab, err)
}

// ruleOf is the rule an EInvalid error names first.
func ruleOf(err error) string {
	var se *sim.Error
	if errors.As(err, &se) && len(se.Fields) > 0 {
		return se.Fields[0].Rule
	}
	return ""
}
