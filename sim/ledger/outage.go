package ledger

import (
	"errors"
	"time"

	"idemlab/sim"
	"idemlab/sim/store"
)

// What the lab does while the database does not answer, as its log says.
const dbDownMeans = "charges answer 503 until it does"

// dbRetry is the Retry-After of a charge the database could not take.
const dbRetry = 5 * time.Second

// commitError is a write that failed after its function had done all its
// work: at its COMMIT (or the savepoint around it).
type commitError struct{ err error }

func (e *commitError) Error() string { return e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

// committing runs fn through write, telling a failure at the COMMIT apart
// (commitError); a write that commits says the database answers. fn runs
// on the writer's goroutine, which hands its result back over a channel:
// done is read after that.
func (g *Ledger) committing(write func(func(*store.Tx) error) error, fn func(*store.Tx) error) error {
	done := false
	err := write(func(tx *store.Tx) error {
		err := fn(tx)
		done = err == nil
		return err
	})
	switch {
	case err == nil:
		g.DB.Ok()
	case done:
		return &commitError{err}
	}
	return err
}

// commitUnknown reports whether a charge that failed may have committed all
// the same: PostgreSQL stopped answering at its COMMIT. (SQLite's COMMIT,
// in the process, either answers or fails whole; an error PostgreSQL itself
// raised at COMMIT means it rolled back.)
func (g *Ledger) commitUnknown(err error) bool {
	var ce *commitError
	return errors.As(err, &ce) && g.Store.Postgres() && !store.IsAnswered(err)
}

// outage tells a charge's failure truthfully: a database that could not
// take it is 503 with Retry-After, "nothing was charged" or, when its
// COMMIT went unanswered, "not known"; the outage is logged once, at its
// start. (A write that commits ends it: committing.)
func (g *Ledger) outage(err error) error {
	if sim.ErrorCode(err) != sim.EInternal || !store.IsUnavailable(err) {
		return err
	}
	g.DB.Failed(err, dbDownMeans)
	if g.commitUnknown(err) {
		return sim.Unknown(sim.PartDatabase, dbRetry, "db-unknown")
	}
	return sim.Unavailable(sim.PartDatabase, dbRetry, "db-down")
}
