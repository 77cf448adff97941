package ledger

import (
	"context"
	"database/sql"
	"errors"
	"regexp"
	"strings"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/store"
)

// Steps stops a charge of a stepped race at its points: the protections'
// own statements, as the charge runs them. A charge is stepped when its
// request says so (sim/stepped gives the context its Steps); any other
// runs straight through the same code.
type Steps interface {
	// At is called before the statement at p runs, with the transaction
	// open there (nil: none; SQLite's pauses fall outside its one writer).
	// It returns once the racer may run it, or sim.ErrStepAborted.
	At(p sim.Point, tx *store.Tx) error
	// Did tells what the statement at p did.
	Did(p sim.Point, sql string, r sim.StepResult)
	// Began tells of the racer's transaction, as it begins (PostgreSQL):
	// whose locks its statements may wait for.
	Began(tx *store.Tx)
	// Finished tells what the server did with the racer's charge, once it
	// has done all it will.
	Finished(o sim.Outcome)
}

type stepsKey struct{}

// WithSteps returns ctx for a charge that s steps.
func WithSteps(ctx context.Context, s Steps) context.Context {
	return context.WithValue(ctx, stepsKey{}, s)
}

// detach is ctx without its cancellation, its Steps found first: a value
// looked up through context.WithoutCancel costs an allocation each time,
// and a charge looks its Steps up at every statement.
func detach(ctx context.Context) context.Context {
	return context.WithValue(context.WithoutCancel(ctx), stepsKey{}, stepsOf(ctx))
}

func stepsOf(ctx context.Context) Steps {
	s, _ := ctx.Value(stepsKey{}).(Steps)
	return s
}

func stepped(ctx context.Context) bool { return stepsOf(ctx) != nil }

// at stops a stepped charge before the statement at p.
func at(ctx context.Context, p sim.Point, tx *store.Tx) error {
	if s := stepsOf(ctx); s != nil {
		return s.At(p, tx)
	}
	return nil
}

// did tells a stepped charge's Steps what the statement at p did.
func did(ctx context.Context, p sim.Point, query string, r sim.StepResult) {
	if s := stepsOf(ctx); s != nil {
		s.Did(p, oneLine(query), r)
	}
}

var spaces = regexp.MustCompile(`\s+`)

// oneLine is a statement as the log shows it: on one line.
func oneLine(q string) string { return strings.TrimSpace(spaces.ReplaceAllString(q, " ")) }

// Points are the points a stepped charge stops at, in order, under the
// protection, with a key or without, on PostgreSQL or SQLite. On SQLite a
// write's statements and its COMMIT are one point: its one writer serves
// every lab and is never held while a person thinks.
func Points(pr sim.Protection, key, postgres bool) []sim.Point {
	var ps []sim.Point
	switch {
	case pr == sim.ProtectReplay && key:
		ps = []sim.Point{sim.PointClaim, sim.PointCharge}
		if postgres {
			ps = append(ps, sim.PointStore)
		}
	case pr == sim.ProtectReplay:
		return nil // refused at once: no key
	case pr == sim.ProtectCheckThenInsert && key:
		ps = []sim.Point{sim.PointSelect, sim.PointInsert}
	case pr == sim.ProtectSetNX && key:
		ps = []sim.Point{sim.PointSetNX, sim.PointInsert}
	default:
		ps = []sim.Point{sim.PointInsert}
	}
	if postgres {
		ps = append(ps, sim.PointCommit)
	}
	return ps
}

// insertResult is what a payment's INSERT did.
func insertResult(p *sim.Payment, err error) sim.StepResult {
	switch {
	case err == nil && p != nil:
		return sim.StepResult{Code: sim.StepInserted, Payment: p.ID}
	case store.IsUnique(err):
		return sim.StepResult{Code: sim.StepUnique}
	case errors.Is(err, sql.ErrNoRows):
		return sim.StepResult{Code: sim.StepSkipped}
	}
	return failed(err)
}

// failed is a statement's failure, as the log tells it.
func failed(err error) sim.StepResult {
	switch {
	case errors.Is(err, sim.ErrStepAborted):
		return sim.StepResult{Code: sim.StepRolledBack}
	case store.IsSerialization(err):
		return sim.StepResult{Code: sim.StepSerialize}
	}
	return sim.StepResult{Code: sim.StepFailed}
}

// steppedTx runs fn in a transaction of its own for a stepped charge on
// PostgreSQL, at the lab's isolation level, and stops before its COMMIT:
// between the racer's points its transaction stays open, holding only its
// lab's locks. The first point comes before the BEGIN, so that a racer
// stepped after another has committed takes its snapshot after that.
func (g *Ledger) steppedTx(ctx context.Context, s sim.Settings, fn func(*store.Tx) error) error {
	reached := false
	err := g.Store.Isolated(ctx, s.Isolation == sim.IsolationSerializable, func(tx *store.Tx) error {
		stepsOf(ctx).Began(tx)
		if err := fn(tx); err != nil {
			return err
		}
		if err := at(ctx, sim.PointCommit, tx); err != nil {
			return err
		}
		reached = true
		return crashBeforeCommit(s)
	})
	if reached {
		r := sim.StepResult{Code: sim.StepCommitted}
		if err != nil {
			r = failed(err)
		}
		did(ctx, sim.PointCommit, "COMMIT", r)
	}
	return err
}

// insertStepped is insertOne for a stepped charge on PostgreSQL: the
// INSERT, under the lab's lock, then a stop before the COMMIT.
func (g *Ledger) insertStepped(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings, dedup *string, onConflict bool) (*sim.Payment, error) {
	var p *sim.Payment
	err := g.steppedTx(ctx, s, func(tx *store.Tx) (err error) {
		if err := tx.LockKey(l.ID); err != nil {
			did(ctx, sim.PointInsert, sqlInsertPayment, failed(err))
			return err
		}
		p, err = g.write(tx, l, c, dedup, onConflict)
		did(ctx, sim.PointInsert, insertSQL(dedup, onConflict, false), insertResult(p, err))
		return err
	})
	return p, err
}

// The INSERTs a charge runs, as the log shows them: constants, so that a
// charge nobody steps builds no text.
const (
	sqlInsertSkip         = sqlInsertPayment + ` ON CONFLICT (lab_id, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING`
	sqlInsertCommit       = sqlInsertPayment + `; COMMIT`
	sqlInsertSkipCommit   = sqlInsertSkip + `; COMMIT`
	sqlInsertAnswerCommit = sqlInsertPayment + "; " + sqlComplete + "; COMMIT"
)

// insertSQL is the INSERT a charge runs, with its COMMIT when the two are
// one point (SQLite).
func insertSQL(dedup *string, onConflict, commit bool) string {
	switch skip := dedup != nil && onConflict; {
	case skip && commit:
		return sqlInsertSkipCommit
	case skip:
		return sqlInsertSkip
	case commit:
		return sqlInsertCommit
	}
	return sqlInsertPayment
}
