package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"idemlab/sim"
	"idemlab/sim/store/pgsql"
)

// maxBatch bounds how many transactions one commit carries.
const maxBatch = 64

// errClosed is what a write gets after the store has closed.
var errClosed = errors.New("store: closed")

// PanicError is what a writing transaction whose function panicked returns:
// its batch rolled back, and the writer went on with the next.
type PanicError struct {
	Value any
	Stack []byte
}

// Error says what the panicking transaction panicked with.
func (p *PanicError) Error() string { return fmt.Sprintf("store: a transaction panicked: %v", p.Value) }

// errBatchFailed is what the other transactions of a batch get when one of
// them panicked: the whole batch rolled back, and they may be retried.
var errBatchFailed = errors.New("store: another transaction of the same commit failed; nothing was written")

// txJob is one writing transaction waiting for its turn.
type txJob struct {
	ctx  context.Context
	fn   func(*Tx) error
	done chan error    // its result, when another transaction's caller ran it
	lead chan struct{} // told to run the queue itself
}

// writer runs the store's writing transactions on its one connection, with
// group commit and no goroutine of its own. A caller that finds the writer
// idle runs its transaction at once, on its own goroutine. Callers that come
// while it works queue; when it is done it hands the queue to the first of
// them, who runs the whole queue as one transaction: each job inside a
// savepoint of its own, so that one's failure rolls back only itself. Each
// still sees the jobs before it as committed, so the guarantees of UNIQUE,
// ON CONFLICT and the replay claim are those of serial transactions; what
// is shared is the commit (BEGIN, the WAL write), most of a small
// transaction's cost.
//
// A job whose context ends while it waits leaves the queue without running.
// A job that panics rolls its whole batch back (the connection's state after
// a panic is not to be trusted with the others' writes): it gets a
// *PanicError, the others errBatchFailed, and the writer stays usable.
type writer struct {
	db *sql.DB
	// first runs the first statement of every transaction, on PostgreSQL:
	// the lease step, and in a lab's writer (labWriters) the lab's lock, so
	// that the lab's writes of every process run one batch at a time.
	// It returns the transaction's id, by which settle (PostgreSQL) learns
	// whether a COMMIT whose answer was lost committed.
	first  func(context.Context, *sql.Tx) (int64, error)
	settle func(xid int64, err error) error
	asked  *pgsql.Asked // PostgreSQL's lab writer: the numbers its batches ask for
	lock   *sql.Stmt    // PostgreSQL: a key's lock, for Tx.LockKey

	savepoint, rollbackTo, release *sql.Stmt // one job of a group commit

	stmts *stmtCache // SQLite: the statements the transactions run, compiled between them

	announce *atomic.Pointer[announcer] // PostgreSQL: where what the transactions tell goes (the store's, shared)

	mu     sync.Mutex
	queue  []*txJob
	busy   bool
	closed bool
}

// prepare prepares the savepoint statements of the group commits.
func (w *writer) prepare(ctx context.Context) error {
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{{&w.savepoint, "SAVEPOINT job"}, {&w.rollbackTo, "ROLLBACK TO job"}, {&w.release, "RELEASE job"}} {
		st, err := w.db.PrepareContext(ctx, p.sql)
		if err != nil {
			return fmt.Errorf("store: prepare %q: %w", p.sql, err)
		}
		*p.dst = st
	}
	return nil
}

// run runs fn in a writing transaction and returns its result.
func (w *writer) run(ctx context.Context, fn func(*Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j := &txJob{ctx: ctx, fn: fn, done: make(chan error, 1), lead: make(chan struct{}, 1)}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errClosed
	}
	w.queue = append(w.queue, j)
	if w.busy {
		w.mu.Unlock()
		select {
		case err := <-j.done:
			return err
		case <-j.lead:
		case <-ctx.Done():
			if w.leave(j) {
				return ctx.Err()
			}
			// Too late to leave: a leader holds it, or is handing over to it.
			select {
			case err := <-j.done:
				return err
			case <-j.lead:
			}
		}
		w.mu.Lock()
	}
	// j leads: the queue is empty but for j when the writer was idle, and
	// the leader before hands over to the job at the head of the queue.
	w.busy = true
	n := min(len(w.queue), maxBatch)
	batch := w.queue[:n:n]
	w.queue = w.queue[n:]
	w.mu.Unlock()

	// On PostgreSQL, where each statement is a round trip, a batch first
	// runs without a savepoint around each job, holding the writes it may
	// (Tx.Later); if one fails, all of it runs again with savepoints.
	errs := w.commit(batch, w.first == nil)
	if errs == nil {
		errs = w.commit(batch, true)
	}
	// The connection is the leader's until it hands over: the statements
	// this batch met are compiled now, for the batches to come.
	w.stmts.prepareWanted(context.Background())
	var mine error
	for i, b := range batch {
		if b == j {
			mine = errs[i]
		} else {
			b.done <- errs[i]
		}
	}
	w.handOver()
	return mine
}

// leave takes j out of the queue if it is still there, waiting.
func (w *writer) leave(j *txJob) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, q := range w.queue {
		if q == j && (i > 0 || !w.handing(j)) {
			w.queue = append(w.queue[:i:i], w.queue[i+1:]...)
			return true
		}
	}
	return false
}

// handing reports whether j, at the head of the queue, was told to lead.
func (w *writer) handing(j *txJob) bool { return len(j.lead) > 0 }

// handOver passes the writer to the job at the head of the queue, or marks
// it idle.
func (w *writer) handOver() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue) > 0 {
		w.queue[0].lead <- struct{}{}
		return
	}
	w.busy = false
}

// close refuses new transactions; those queued still run.
func (w *writer) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

// commit runs the batch in one transaction and returns each job's result;
// without savepoints, nil when a job failed (the batch rolled back).
func (w *writer) commit(batch []*txJob, savepoints bool) []error {
	errs := make([]error, len(batch))
	ctx := context.Background()
	tx, xid, err := begin(ctx, w.db, nil, w.first)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	an := w.announce.Load()
	var told []sim.Event // what the jobs that succeed tell, in their order
	panicked := -1
	b := &pgsql.Batch{Hold: !savepoints, Asked: w.asked}
	for i, j := range batch {
		if err := j.ctx.Err(); err != nil {
			errs[i] = err // its caller has gone: nothing of it is written
			continue
		}
		t := &Tx{ctx: j.ctx, tx: tx, lock: w.lock, stmts: w.stmts, b: b}
		var mine []sim.Event
		if an != nil {
			t.told = &mine
		}
		if len(batch) == 1 || !savepoints {
			errs[i] = call(j.fn, t)
		} else {
			errs[i] = w.inSavepoint(ctx, t, j.fn)
		}
		if errs[i] != nil && len(batch) > 1 && !savepoints {
			tx.Rollback()
			return nil
		}
		var pe *PanicError
		if errors.As(errs[i], &pe) {
			panicked = i
			break
		}
		if errs[i] == nil {
			told = append(told, mine...)
		}
	}
	if panicked >= 0 {
		rerr := tx.Rollback()
		for i := range errs {
			if i != panicked {
				errs[i] = errors.Join(errBatchFailed, rerr)
			}
		}
		return errs
	}
	if b.Flush(ctx, tx); b.Failed != nil { // a held write: the batch runs again, holding none
		tx.Rollback()
		return nil
	}
	if len(batch) == 1 && errs[0] != nil {
		errs[0] = errors.Join(errs[0], tx.Rollback())
		return errs
	}
	err = an.commit(ctx, tx, told)
	if w.settle != nil {
		err = w.settle(xid, err)
	}
	if err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs
}

// call runs fn, turning a panic into a *PanicError.
func call(fn func(*Tx) error, tx *Tx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return fn(tx)
}

// inSavepoint runs fn so that its failure undoes only its own writes.
func (w *writer) inSavepoint(ctx context.Context, tx *Tx, fn func(*Tx) error) error {
	if _, err := tx.tx.StmtContext(ctx, w.savepoint).ExecContext(ctx); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	err := call(fn, tx)
	var pe *PanicError
	if errors.As(err, &pe) {
		return err // the whole transaction rolls back
	}
	if err != nil {
		tx.b.Forget() // what the job counted was rolled back
		if _, rerr := tx.tx.StmtContext(ctx, w.rollbackTo).ExecContext(ctx); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	if _, rerr := tx.tx.StmtContext(ctx, w.release).ExecContext(ctx); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}
