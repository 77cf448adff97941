// Package ledger is the protected charge: each protection the lab offers,
// one file each behind one interface, writing the payments the lessons
// count, and what the ledger shows (totals, the newest payments, the orders
// charged twice, the charges told "done" that never happened).
package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/idempotency"
	"idemlab/sim/keys"
	"idemlab/sim/labs"
	"idemlab/sim/outage"
	"idemlab/sim/store"
)

// Result is what the server did with a charge request.
type Result struct {
	Outcome sim.Outcome
	Payment *sim.Payment // the new payment (charged)
	Replay  *sim.Stored  // the first answer, to send again (replayed)
	Answer  *sim.Stored  // the new payment's answer, as replay stored it (charged); nil: made by the caller
	Queued  bool         // the new payment's message waits in the outbox (notify queue)
}

// guard is one protection: how the server charges under it.
type guard interface {
	charge(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings) (Result, error)
}

// Owed is what a new payment owes the customer (the "order placed"
// email): written in the payment's transaction, sent once it commits.
type Owed interface {
	Write(tx *store.Tx, l *labs.Lab, s sim.Settings, p *sim.Payment) error
	Send(ctx context.Context, l *labs.Lab, p *sim.Payment)
}

// Config is what a Ledger depends on.
type Config struct {
	Store   *store.Store
	Labs    *labs.Registry
	Records *idempotency.Records
	KV      *keys.Store // set-nx's; nil refuses set-nx (503)
	Owed    Owed        // nil: a payment owes nothing
	Bus     *events.Bus
	Clock   clock.Clock // the database's
	Log     *slog.Logger
	DB      *outage.Watch // the database's outages; nil: logged to Log
}

// Ledger is the labs' payments and the protections that guard them.
type Ledger struct {
	Config
	guards map[sim.Protection]guard

	insert, insertOnConflict, checkKey *store.Stmt
}

// New returns the ledger, its statements prepared.
func New(ctx context.Context, cfg Config) (*Ledger, error) {
	g := &Ledger{Config: cfg}
	if g.DB == nil {
		g.DB = outage.New(cfg.Log, sim.PartDatabase)
	}
	g.guards = map[sim.Protection]guard{
		sim.ProtectNone:            plain{g},
		sim.ProtectCheckThenInsert: checkThenInsert{g},
		sim.ProtectUnique:          unique{g},
		sim.ProtectOnConflict:      onConflict{g},
		sim.ProtectReplay:          replay{g},
		sim.ProtectSetNX:           setNX{g},
	}
	var err error
	if g.insertOnConflict, err = cfg.Store.Prepare(ctx, sqlInsertPayment+` ON CONFLICT (lab_id, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING RETURNING n`); err != nil {
		return nil, err
	}
	g.insert, err = cfg.Store.Prepare(ctx, sqlInsertPayment+` RETURNING n`)
	if err != nil {
		return nil, err
	}
	g.checkKey, err = cfg.Store.PrepareRead(ctx, sqlCheckKey)
	return g, err
}

// sqlCheckKey is check-then-insert's SELECT: payments with the key.
const sqlCheckKey = `SELECT COUNT(*) FROM payments WHERE lab_id = ? AND idempotency_key = ?`

// A payment's number is the next in its lab (found through the index on
// (lab_id, n)): a payment is written under its lab's lock (WriteLab), so
// two never take the same.
const sqlInsertPayment = `
INSERT INTO payments (lab_id, n, order_id, amount, idempotency_key, dedup_key, direct, created_at)
VALUES (?1, COALESCE((SELECT MAX(n) FROM payments WHERE lab_id = ?1), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7)`

// A payment numbered by the group commit that writes it (store.Tx.Next),
// which holds the lab's lock from before it asks.
const (
	sqlLastPayment    = `SELECT COALESCE(MAX(n), 0) FROM payments WHERE lab_id = ?1`
	sqlInsertNumbered = `
INSERT INTO payments (lab_id, n, order_id, amount, idempotency_key, dedup_key, direct, created_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`
)

// Charge runs one charge request against the lab's ledger under the lab's
// current protection. The work is not tied to the caller's context: once a
// request has reached the server it runs to the end, as a real server does
// when the client hangs up.
func (g *Ledger) Charge(ctx context.Context, l *labs.Lab, c sim.Charge) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	ctx = detach(ctx)
	s := l.Settings()
	var (
		res Result
		err error
	)
	if gd, ok := g.guards[s.Protection]; ok {
		res, err = gd.charge(ctx, l, c, s)
	} else {
		err = fmt.Errorf("ledger: unknown protection %q", s.Protection)
	}
	if err != nil {
		err = g.outage(err)
	}
	res.Queued = res.Payment != nil && err == nil && s.Notify == sim.NotifyQueue
	g.Bus.Publish(sim.Event{Lab: l.ID, Kind: sim.EventCharge, Outcome: told(res, err), Payment: res.Payment, Key: c.Key, OrderID: c.OrderID,
		Queued: res.Queued})
	if st := stepsOf(ctx); st != nil {
		st.Finished(told(res, err))
	}
	if res.Payment != nil && g.Owed != nil {
		g.Owed.Send(ctx, l, res.Payment)
	}
	return res, err
}

// told is what the server told the client: the result's outcome, or the
// error's.
func told(res Result, err error) sim.Outcome {
	switch sim.ErrorCode(err) {
	case sim.EInFlight:
		return sim.OutcomeInFlight
	case sim.EConflict:
		return sim.OutcomeConflict
	case sim.EKeyReused:
		return sim.OutcomeMismatch
	case sim.EKeyMissing, sim.EInvalid:
		return sim.OutcomeRejected
	case sim.ECrashed:
		return sim.OutcomeDropped
	case sim.EUnavailable:
		return sim.OutcomeUnavailable
	}
	if err != nil {
		return sim.OutcomeFailed
	}
	return res.Outcome
}

// work is the charge's own time: calling the bank, say. It runs before the
// commit, so a retry can arrive while the first request is still working.
func (g *Ledger) work(ctx context.Context, s sim.Settings) { g.pause(ctx, s.ServerDelayMS) }

// pause waits ms on the ledger's clock. A stepped charge does not wait:
// the person stepping it is its gap.
func (g *Ledger) pause(ctx context.Context, ms int) {
	if stepped(ctx) {
		return
	}
	clock.Sleep(ctx, g.Clock, time.Duration(ms)*time.Millisecond)
}

// write inserts one payment in tx. dedup is the value of the column the
// UNIQUE constraint guards (nil: unguarded). What the charge owes the
// customer commits with it, and a charge sent straight to the API is
// recorded for the lab's scenario.
func (g *Ledger) write(tx *store.Tx, l *labs.Lab, c sim.Charge, dedup *string, onConflict bool) (*sim.Payment, error) {
	now := g.Clock.Now()
	st := g.insert
	if onConflict {
		st = g.insertOnConflict
	}
	p := &sim.Payment{OrderID: c.OrderID, Amount: c.Amount, IdempotencyKey: c.Key, CreatedAt: time.UnixMilli(now.UnixMilli()).UTC()}
	if dedup == nil && tx.Holding() { // nothing can refuse it: it goes with the group commit's
		n, err := tx.Next(sqlLastPayment, l.ID)
		if err != nil {
			return nil, err
		}
		p.ID = n
		if err := tx.Later(sqlInsertNumbered, l.ID, n, c.OrderID, c.Amount, c.Key, nil, c.Direct, now.UnixMilli()); err != nil {
			return nil, err
		}
	} else if err := tx.QueryRowStmt(st, l.ID, c.OrderID, c.Amount, c.Key, dedup, c.Direct, now.UnixMilli()).Scan(&p.ID); err != nil {
		return nil, err
	}
	if g.Owed != nil {
		if err := g.Owed.Write(tx, l, l.Settings(), p); err != nil {
			return nil, err
		}
	}
	if c.Direct { // a scenario replays it; the lab's client's own are replayed as operations
		if err := g.Labs.Record(tx, l.ID, sim.Action{Kind: "direct", OrderID: c.OrderID, Amount: c.Amount, Key: c.Key}); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// insertOne writes one payment in a transaction of its own, failing where
// the lab's server_fault says the server dies before its commit.
func (g *Ledger) insertOne(ctx context.Context, l *labs.Lab, c sim.Charge, s sim.Settings, dedup *string, onConflict bool) (p *sim.Payment, err error) {
	if err := at(ctx, sim.PointInsert, nil); err != nil {
		return nil, err
	}
	if stepped(ctx) && g.Store.Postgres() {
		return g.insertStepped(ctx, l, c, s, dedup, onConflict)
	}
	defer func() { did(ctx, sim.PointInsert, insertSQL(dedup, onConflict, true), insertResult(p, err)) }()
	err = g.committing(func(fn func(*store.Tx) error) error { return g.Store.WriteLab(ctx, l.ID, fn) }, func(tx *store.Tx) (err error) {
		if p, err = g.write(tx, l, c, dedup, onConflict); err != nil {
			return err
		}
		return crashBeforeCommit(s)
	})
	return p, err
}

func charged(p *sim.Payment) Result { return Result{Outcome: sim.OutcomeCharged, Payment: p} }

// duplicate is the result of a key already seen, under the protections
// that do not store answers: no new charge, and not the first answer either.
func duplicate() Result { return Result{Outcome: sim.OutcomeDuplicate} }

// errCrashed is the server dying in the middle of a charge (server_fault
// crash-after-guard): whatever its transaction wrote rolls back, and the
// web layer drops the connection without an answer.
var errCrashed = &sim.Error{Code: sim.ECrashed, Key: "crashed"}

// crashBeforeCommit is the fault point between a charge's guard and its
// commit: under crash-after-guard the transaction fails there and rolls back.
func crashBeforeCommit(s sim.Settings) error {
	if s.ServerFault == sim.FaultCrashAfterGuard {
		return errCrashed
	}
	return nil
}

// charging wraps a charge's failure; the server's own crash and a lab
// removed meanwhile pass as they are.
func charging(l *labs.Lab, c sim.Charge, err error) error {
	if errors.Is(err, errCrashed) {
		return err
	}
	return labs.Failed(l.ID, "ledger: charge "+c.OrderID, err)
}
