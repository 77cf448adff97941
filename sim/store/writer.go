package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"idemlab/sim/store/group"
	"idemlab/sim/store/pgsql"
	"idemlab/sim/store/stmts"
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
type txJob = group.Job[func(*Tx) error]

// writer runs the store's writing transactions, with group commit and no
// goroutine of its own (group.Queue). A caller that finds the writer idle
// runs its transaction at once, on its own goroutine. Callers that come
// while it works queue; the first of them starts the next batch (on
// PostgreSQL it begins its transaction, which waits for the lab's lock),
// and once the batch before has ended runs the whole queue as one
// transaction, in which one job's failure rolls back only itself (run).
// Each sees the jobs before it as committed, so the guarantees of UNIQUE,
// ON CONFLICT and the replay claim are those of serial transactions; what
// is shared is the commit (BEGIN, the WAL write), most of their cost.
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
	first  firstStep
	settle func(xid int64, err error) error
	asked  *pgsql.Asked // PostgreSQL's lab writer: the numbers its batches ask for

	raw *stmts.Raw // SQLite: the statements the transactions run, compiled on its connection

	announce *atomic.Pointer[announcer] // PostgreSQL: where what the transactions tell goes (the store's, shared)

	turn  chan struct{} // SQLite: held by the batch that runs, or by the checkpointer between two
	wrote func()        // SQLite file: tells the checkpointer a batch has ended
	last  int           // SQLite: how many jobs the last batch carried (its leader's, under turn)

	queue group.Queue[func(*Tx) error]
}

// run runs fn in a writing transaction and returns its result.
func (w *writer) run(ctx context.Context, fn func(*Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j := group.NewJob(ctx, fn)
	if starts, err := w.queue.Wait(j, errClosed); !starts {
		return err
	}
	// j starts the next batch, which takes the queue once its turn comes.
	st, ok := w.start(ctx)
	if !ok {
		w.queue.Abandon(j)
		return ctx.Err()
	}
	defer st.cancel()
	if w.first == nil && w.last > 1 {
		// Under load (the batch before carried several), the requests
		// that are ready to queue get the processor first: a batch of
		// more jobs shares one COMMIT, whose WAL frames (a write for each
		// page it changed) are most of a SQLite batch's cost.
		runtime.Gosched()
		runtime.Gosched()
	}
	batch := w.queue.Take(maxBatch)
	w.last = len(batch)
	defer w.end()

	// A batch first runs without a savepoint around each job, holding the
	// writes it may (Tx.Later) to write them a statement for many rows (on
	// PostgreSQL a statement is a round trip; on SQLite it costs in the
	// driver and the engine, which a job alone has nobody to share with).
	// If one job fails, all of it runs again with savepoints.
	errs := w.commit(batch, st, w.first == nil && len(batch) == 1)
	if errs == nil {
		errs = w.commit(batch, w.begin(context.Background()), true)
	}
	var mine error
	for i, b := range batch {
		if b == j {
			mine = errs[i]
		} else {
			b.Done(errs[i])
		}
	}
	return mine
}

// begun is a batch's transaction, begun with its first statement.
type begun struct {
	tx     txn
	xid    int64
	err    error
	b      *pgsql.Batch       // what its jobs share; its first statement may have counted
	cancel context.CancelFunc // ends the transaction's context, once it has ended
}

// start begins the next batch's transaction once its turn comes, or
// reports false when ctx, the starting job's, ends first. On PostgreSQL
// the turn is the lab's lock, which the first statement waits for: the
// next batch begins while one runs, and the round trips of its BEGIN and
// its first statement pass meanwhile. On SQLite (one connection) it is
// the batch before having ended.
func (w *writer) start(ctx context.Context) (begun, bool) {
	if w.first == nil {
		select {
		case w.turn <- struct{}{}:
			return w.begin(context.Background()), true
		case <-ctx.Done():
			return begun{}, false
		}
	}
	bctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	st := w.begin(bctx)
	st.cancel = cancel
	if !stop() { // ctx ended: the wait was cut short, or its transaction rolls back
		if st.err == nil {
			st.tx.Rollback()
		}
		cancel()
		return begun{}, false
	}
	return st, true
}

// begin begins a transaction of the writer.
func (w *writer) begin(ctx context.Context) begun {
	b := &pgsql.Batch{Asked: w.asked}
	if w.first == nil { // SQLite: no data-modifying WITH
		tx, err := stmts.Begin(ctx, w.db, w.raw)
		if err != nil {
			return begun{err: err, b: b, cancel: func() {}}
		}
		b.Each = tx
		return begun{tx: tx, b: b, cancel: func() {}}
	}
	tx, xid, err := begin(ctx, w.db, nil, w.first, b)
	return begun{tx, xid, err, b, func() {}}
}

// end marks a batch's end.
func (w *writer) end() {
	w.queue.End()
	if w.first == nil {
		<-w.turn
		if w.wrote != nil {
			w.wrote()
		}
	}
}

// hold takes the turn between two batches, for the checkpointer (SQLite).
func (w *writer) hold(stop <-chan struct{}) (func(), bool) {
	select {
	case w.turn <- struct{}{}:
		return func() { <-w.turn }, true
	case <-stop:
		return nil, false
	}
}

// close refuses new transactions; those queued still run.
func (w *writer) close() { w.queue.Close() }

// commit runs the batch in one transaction and returns each job's result;
// without savepoints, nil when a job failed (the batch rolled back).
func (w *writer) commit(batch []*txJob, st begun, savepoints bool) []error {
	errs := make([]error, len(batch))
	ctx := context.Background()
	tx, xid, err := st.tx, st.xid, st.err
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	an := w.announce.Load()
	var told []Told // what the jobs that succeed tell, in their order
	panicked := -1
	b := st.b
	b.Hold = !savepoints
	for i, j := range batch {
		if err := j.Ctx.Err(); err != nil {
			errs[i] = err // its caller has gone: nothing of it is written
			continue
		}
		t := &Tx{ctx: j.Ctx, tx: tx, b: b}
		var mine []Told
		if an != nil {
			t.told, t.an = &mine, an
		}
		if len(batch) == 1 || !savepoints {
			errs[i] = call(j.Do, t)
		} else {
			errs[i] = w.inSavepoint(ctx, t, j.Do)
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
	if len(batch) == 1 && errs[0] != nil && b.Failed == nil {
		errs[0] = errors.Join(errs[0], tx.Rollback())
		return errs
	}
	written, err := w.finish(ctx, tx, b, an.statements(told))
	if !written { // a held write: the batch runs again, holding none
		return nil
	}
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
