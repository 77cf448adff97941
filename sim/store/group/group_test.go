package group

import (
	"context"
	"errors"
	"fmt"
	"idemlab/sim/waittest"
	"testing"
	"time"
)

var errClosed = errors.New("closed")

// wait runs Wait on a goroutine: its outcome arrives on the channel.
func wait(q *Queue[int], j *Job[int]) chan error {
	out := make(chan error, 1)
	go func() {
		starts, err := q.Wait(j, errClosed)
		if starts {
			err = errStarts
		}
		out <- err
	}()
	return out
}

var errStarts = errors.New("starts")

// waitQueued waits until n jobs are queued (their callers wait in Wait).
func waitQueued(t *testing.T, q *Queue[int], n int) {
	t.Helper()
	waittest.For(t, fmt.Sprintf("%d jobs queued", n), func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.jobs) == n
	})
}

func outcome(t *testing.T, c chan error) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("no outcome")
		return nil
	}
}

// The first job starts a batch at once; the one that comes while it starts
// waits, and the batch takes it; the next batch's start goes to the first
// job the batch left, and the jobs it took get their results.
func TestBatchesTakeTheQueueInTurn(t *testing.T) {
	var q Queue[int]
	ctx := context.Background()
	a, b, c, d := NewJob(ctx, 1), NewJob(ctx, 2), NewJob(ctx, 3), NewJob(ctx, 4)
	if starts, err := q.Wait(a, errClosed); !starts || err != nil {
		t.Fatalf("the first job: starts %v, %v", starts, err)
	}
	bOut := wait(&q, b)
	waitQueued(t, &q, 2)
	cOut := wait(&q, c)
	waitQueued(t, &q, 3)
	batch := q.Take(2)
	if len(batch) != 2 || batch[0] != a || batch[1] != b {
		t.Fatalf("batch %v, want a and b", batch)
	}
	if err := outcome(t, cOut); err != errStarts {
		t.Fatalf("the job left behind: %v, want to start the next batch", err)
	}
	dOut := wait(&q, d) // comes while the next starts: waits
	waitQueued(t, &q, 2)
	if !q.Queued(2) {
		t.Error("a batch runs with two queued: Queued(2) false")
	}
	b.Done(nil)
	if err := outcome(t, bOut); err != nil {
		t.Errorf("the job run by another's batch: %v", err)
	}
	q.End()
	if next := q.Take(8); len(next) != 2 || next[0] != c || next[1] != d {
		t.Fatalf("the next batch %v, want c, then d", next)
	}
	d.Done(errors.New("refused"))
	if err := outcome(t, dOut); err == nil || err.Error() != "refused" {
		t.Errorf("d: %v, want its result", err)
	}
	q.End()
	// Idle again: the next job starts at once.
	if starts, _ := q.Wait(NewJob(ctx, 5), errClosed); !starts {
		t.Error("a job on an idle queue does not start")
	}
}

// A waiting job whose context ends leaves the queue; a starter whose
// context ends abandons, and the first job waiting starts instead; after
// Close, jobs are refused.
func TestJobsLeave(t *testing.T) {
	var q Queue[int]
	ctx := context.Background()
	a := NewJob(ctx, 1)
	q.Wait(a, errClosed)
	cctx, cancel := context.WithCancel(ctx)
	b, c := NewJob(cctx, 2), NewJob(ctx, 3)
	bOut := wait(&q, b)
	waitQueued(t, &q, 2)
	cOut := wait(&q, c)
	waitQueued(t, &q, 3)
	cancel()
	if err := outcome(t, bOut); !errors.Is(err, context.Canceled) {
		t.Errorf("the waiting job whose context ended: %v", err)
	}
	waitQueued(t, &q, 2)
	q.Abandon(a)
	if err := outcome(t, cOut); err != errStarts {
		t.Errorf("after the starter abandoned: %v, want c to start", err)
	}
	q.Close()
	if starts, err := q.Wait(NewJob(ctx, 4), errClosed); starts || err != errClosed {
		t.Errorf("after Close: starts %v, %v", starts, err)
	}
}
