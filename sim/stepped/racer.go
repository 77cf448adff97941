package stepped

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"

	"idemlab/sim"
	"idemlab/sim/store"
)

// racer is one request of a race: the ledger's Steps for its charge.
type racer struct {
	rc     *Race
	i      int
	goCh   chan struct{}                   // a step: run the next statement
	looks  chan chan []sim.Payment         // what its transaction sees, asked while it stands
	req    atomic.Pointer[context.Context] // its request's, once it has come
	pid    atomic.Int32                    // its transaction's backend (PostgreSQL)
	hangUp func()                          // its client gives up

	// guarded by rc.mu: a racer is done once the server has finished
	// its charge and its client has stopped waiting (answered, or gave up)
	finished, returned bool
}

// Finished records what the server did with the racer's charge.
func (r *racer) Finished(o sim.Outcome) {
	rc := r.rc
	rc.mu.Lock()
	r.finished = true
	rc.v.Racers[r.i].Outcome = o
	over := rc.settled(r)
	rc.mu.Unlock()
	rc.ending(over)
}

// arrive binds the racer to its request.
func (r *racer) arrive(ctx context.Context) { r.req.Store(&ctx) }

// At stops the racer before the statement at p until it is stepped. While
// it stands, it answers what its transaction sees. An abort, or its
// client's hanging up, ends its charge: what its transaction wrote rolls
// back.
func (r *racer) At(p sim.Point, tx *store.Tx) error {
	rc := r.rc
	req := context.Background()
	if c := r.req.Load(); c != nil {
		req = *c
	}
	select {
	case <-rc.abort:
		return r.ended(p, sim.StepRolledBack)
	default:
	}
	rc.mu.Lock()
	free := rc.free
	rc.v.Racers[r.i].Next = p
	rc.mu.Unlock()
	if free {
		return nil
	}
	sees := r.look(tx)
	rc.mu.Lock()
	v := &rc.v.Racers[r.i]
	v.State, v.Waits, v.Sees = sim.RacerReady, "", sees
	rc.change()
	rc.mu.Unlock()
	for {
		select {
		case <-r.goCh:
			return nil // advance has marked it running
		case <-rc.abort:
			return r.ended(p, sim.StepRolledBack)
		case <-req.Done():
			return r.ended(p, sim.StepHungUp)
		case reply := <-r.looks:
			reply <- r.look(tx)
		}
	}
}

// ended logs why the racer stopped at p for good.
func (r *racer) ended(p sim.Point, code string) error {
	r.Did(p, "ROLLBACK", sim.StepResult{Code: code})
	return sim.ErrStepAborted
}

// Did logs what the statement at p did.
func (r *racer) Did(p sim.Point, query string, res sim.StepResult) {
	rc := r.rc
	rc.mu.Lock()
	v := &rc.v.Racers[r.i]
	v.At, v.Waits = p, ""
	if v.State == sim.RacerWaiting {
		v.State = sim.RacerRunning
	}
	rc.v.Log = append(rc.v.Log, sim.StepLog{Racer: v.Name, Point: p, SQL: query, StepResult: res})
	rc.change()
	rc.mu.Unlock()
}

// Began learns the racer's transaction's backend, so that a lock it waits
// for can be named.
func (r *racer) Began(tx *store.Tx) {
	var pid int32
	if err := tx.QueryRow(`SELECT pg_backend_pid()`).Scan(&pid); err == nil {
		r.pid.Store(pid)
	}
}

// The order's payments, as a racer's transaction sees them.
const sqlSees = `SELECT n, amount, idempotency_key, created_at FROM payments WHERE lab_id = ? AND order_id = ? ORDER BY n LIMIT 20`

// look reads the order's payments in tx, or, outside one, as committed.
func (r *racer) look(tx *store.Tx) []sim.Payment {
	rc := r.rc
	var (
		rows *sql.Rows
		err  error
	)
	if tx != nil {
		rows, err = tx.Query(sqlSees, rc.lab.ID, rc.v.OrderID)
	} else {
		rows, err = rc.rs.Store.Query(context.Background(), sqlSees, rc.lab.ID, rc.v.OrderID)
	}
	ps := []sim.Payment{}
	if err != nil {
		return ps
	}
	defer rows.Close()
	for rows.Next() {
		p := sim.Payment{OrderID: rc.v.OrderID}
		var at int64
		if rows.Scan(&p.ID, &p.Amount, &p.IdempotencyKey, &at) == nil {
			p.CreatedAt = time.UnixMilli(at).UTC()
			ps = append(ps, p)
		}
	}
	return ps
}

// refresh asks a racer that stands at a point what its transaction sees
// now: another's COMMIT may have changed it.
func (r *racer) refresh(ctx context.Context) {
	rc := r.rc
	rc.mu.Lock()
	ready := rc.v.Racers[r.i].State == sim.RacerReady
	rc.mu.Unlock()
	if !ready {
		return
	}
	reply := make(chan []sim.Payment, 1)
	select {
	case r.looks <- reply:
	case <-rc.abort:
		return
	case <-ctx.Done():
		return
	case <-time.After(time.Second): // it was stepped meanwhile
		return
	}
	sees := <-reply
	rc.mu.Lock()
	rc.v.Racers[r.i].Sees = sees
	rc.mu.Unlock()
}
