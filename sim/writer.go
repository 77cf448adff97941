package sim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// maxBatch bounds how many transactions one commit carries.
const maxBatch = 64

// errClosed is what a write gets after the store has closed.
var errClosed = errors.New("store: closed")

// txJob is one writing transaction waiting for its turn.
type txJob struct {
	fn   func(*sql.Tx) error
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
type writer struct {
	db *sql.DB
	q  *queries

	mu     sync.Mutex
	queue  []*txJob
	busy   bool
	closed bool
}

func newWriter(db *sql.DB, q *queries) *writer { return &writer{db: db, q: q} }

// run runs fn in a writing transaction and returns its result.
func (w *writer) run(fn func(*sql.Tx) error) error {
	j := &txJob{fn: fn, done: make(chan error, 1), lead: make(chan struct{}, 1)}
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

	errs := w.commit(batch)
	var mine error
	for i, b := range batch {
		if b == j {
			mine = errs[i]
		} else {
			b.done <- errs[i]
		}
	}
	w.mu.Lock()
	if len(w.queue) > 0 {
		next := w.queue[0]
		w.mu.Unlock()
		next.lead <- struct{}{}
		return mine
	}
	w.busy = false
	w.mu.Unlock()
	return mine
}

// close refuses new transactions; those queued still run.
func (w *writer) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

// commit runs the batch in one transaction and returns each job's result.
func (w *writer) commit(batch []*txJob) []error {
	errs := make([]error, len(batch))
	ctx := context.Background()
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	if len(batch) == 1 {
		if err := batch[0].fn(tx); err != nil {
			errs[0] = errors.Join(err, tx.Rollback())
			return errs
		}
		errs[0] = tx.Commit()
		return errs
	}
	for i, j := range batch {
		errs[i] = w.inSavepoint(ctx, tx, j.fn)
	}
	if err := tx.Commit(); err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	return errs
}

// inSavepoint runs fn so that its failure undoes only its own writes.
func (w *writer) inSavepoint(ctx context.Context, tx *sql.Tx, fn func(*sql.Tx) error) error {
	if _, err := in(ctx, tx, w.q.savepoint).ExecContext(ctx); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	err := fn(tx)
	if err != nil {
		if _, rerr := in(ctx, tx, w.q.rollbackTo).ExecContext(ctx); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	if _, rerr := in(ctx, tx, w.q.release).ExecContext(ctx); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}
