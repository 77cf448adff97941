// Package group is the queue of a group commit: the writes that wait for
// their turn, and which of them starts the next batch. Its writer runs no
// goroutine of its own: the job that starts a batch runs it, the whole
// batch, and tells the others their results.
//
// The next batch is started while one runs: its starter waits for the
// batch's turn (on PostgreSQL, the lab's lock, inside the database), and
// takes the queue only once the turn has come, so that the batch carries
// every job that came meanwhile.
package group

import (
	"context"
	"slices"
	"sync"
)

// Job is a write waiting in a Queue: its caller's context and what it is
// to run.
type Job[T any] struct {
	Ctx  context.Context
	Do   T
	told chan told // its result, when another job's caller ran it, or that it is to start the next batch
}

// told is what a waiting job is told, once: to start the next batch, or
// its result.
type told struct {
	lead bool
	err  error
}

// NewJob is a job of ctx's caller.
func NewJob[T any](ctx context.Context, do T) *Job[T] {
	return &Job[T]{Ctx: ctx, Do: do, told: make(chan told, 1)}
}

// Done tells j's caller its result.
func (j *Job[T]) Done(err error) { j.told <- told{err: err} }

// Queue is the jobs waiting for a batch. It is safe for concurrent use.
type Queue[T any] struct {
	mu       sync.Mutex
	jobs     []*Job[T]
	starting bool // a job starts the next batch
	running  int  // batches taken and not ended
	closed   bool
}

// Wait queues j until it is either to start the next batch itself (starts
// true) or run by another's batch (starts false, and its result). A job
// whose context ends while it waits leaves the queue with ctx's error,
// unless a batch has taken it already. After Close it gets closed.
func (q *Queue[T]) Wait(j *Job[T], closed error) (starts bool, err error) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false, closed
	}
	q.jobs = append(q.jobs, j)
	if !q.starting {
		q.starting = true
		q.mu.Unlock()
		return true, nil
	}
	q.mu.Unlock()
	select {
	case t := <-j.told:
		return t.lead, t.err
	case <-j.Ctx.Done():
		if q.leave(j) {
			return false, j.Ctx.Err()
		}
		// Too late to leave: a batch holds it, or it is told to start one.
		t := <-j.told
		return t.lead, t.err
	}
}

// leave takes j out of the queue if it is still there, waiting.
func (q *Queue[T]) leave(j *Job[T]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.jobs, j)
	if i < 0 || i == 0 && len(j.told) > 0 {
		return false
	}
	q.jobs = slices.Delete(q.jobs, i, i+1)
	return true
}

// Take is the batch of the job that starts it, once its turn has come: the
// jobs queued now, at most max, the first of them the starter's own. The
// job that comes first after them starts the next batch. End must follow.
func (q *Queue[T]) Take(max int) []*Job[T] {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.jobs), max)
	batch := q.jobs[:n:n]
	q.jobs = q.jobs[n:]
	q.running++
	q.handOn()
	return batch
}

// Abandon takes j, whose context ended before its batch's turn came, out
// of the queue; the job that now comes first starts the next batch.
func (q *Queue[T]) Abandon(j *Job[T]) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.jobs = slices.DeleteFunc(q.jobs, func(o *Job[T]) bool { return o == j })
	q.handOn()
}

// handOn tells the first job waiting to start the next batch; q.mu is held.
func (q *Queue[T]) handOn() {
	q.starting = len(q.jobs) > 0
	if q.starting {
		q.jobs[0].told <- told{lead: true}
	}
}

// End marks the end of a batch taken.
func (q *Queue[T]) End() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
}

// Close refuses new jobs; those queued still run.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
}

// Queued reports whether a batch runs with n jobs queued behind it.
func (q *Queue[T]) Queued(n int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running > 0 && len(q.jobs) == n
}
