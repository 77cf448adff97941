package sim

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// maxBatch bounds how many transactions one commit carries.
const maxBatch = 64

// errClosed is what a write gets after the store has closed.
var errClosed = errors.New("store: closed")

// txJob is one writing transaction waiting for the writer.
type txJob struct {
	fn   func(*sql.Tx) error
	done chan error
}

// writer runs every writing transaction of the store on its one connection,
// with group commit: transactions that queue while a commit is under way
// share the next one, each inside a savepoint of its own so that one's
// failure rolls back only itself. A lone transaction runs as it is. Each
// transaction still sees the ones before it as committed, so the guarantees
// of UNIQUE, ON CONFLICT and the replay claim are those of serial
// transactions; what is shared is the cost of the commit (BEGIN, the WAL
// write), which is most of the cost of a small transaction.
type writer struct {
	db   *sql.DB
	jobs chan *txJob
	quit chan struct{}
	done chan struct{}
}

func newWriter(db *sql.DB) *writer {
	w := &writer{db: db, jobs: make(chan *txJob), quit: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// run queues fn and waits for its transaction to commit or fail.
func (w *writer) run(fn func(*sql.Tx) error) error {
	j := &txJob{fn: fn, done: make(chan error, 1)}
	select {
	case w.jobs <- j:
	case <-w.quit:
		return errClosed
	}
	return <-j.done
}

// close stops the writer after the batch under way.
func (w *writer) close() {
	close(w.quit)
	<-w.done
}

func (w *writer) loop() {
	defer close(w.done)
	for {
		var batch []*txJob
		select {
		case j := <-w.jobs:
			batch = append(batch, j)
		case <-w.quit:
			return
		}
	more:
		for len(batch) < maxBatch {
			select {
			case j := <-w.jobs:
				batch = append(batch, j)
			default:
				break more
			}
		}
		errs := w.commit(batch)
		for i, j := range batch {
			j.done <- errs[i]
		}
	}
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
	if _, err := tx.ExecContext(ctx, "SAVEPOINT job"); err != nil {
		return fmt.Errorf("store: savepoint: %w", err)
	}
	err := fn(tx)
	if err != nil {
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO job"); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	if _, rerr := tx.ExecContext(ctx, "RELEASE job"); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return err
}
