package pgsql

import (
	"context"
	"database/sql"
)

// Batch is what the jobs of one group commit share besides the
// transaction: the writes held back for the commit, when it holds them
// (Hold: a PostgreSQL lab writer's first run of a batch), and the numbers
// counted in memory. Its methods take a nil Batch (a transaction of its
// own) as one that holds and counts nothing.
type Batch struct {
	Hold bool
	Pending
	next   map[string]int64
	Failed error // a flush of held writes failed: the batch is to run again
}

// Holding reports whether the batch holds its writes.
func (b *Batch) Holding() bool { return b != nil && b.Hold }

// Flush runs the held writes, and remembers its failure in Failed.
func (b *Batch) Flush(ctx context.Context, tx *sql.Tx) error {
	if b == nil || b.Len() == 0 {
		return nil
	}
	if err := b.Pending.Flush(ctx, tx); err != nil {
		b.Failed = err
		return err
	}
	return nil
}

// Next is the number after the last counted under key, if one was.
func (b *Batch) Next(key string) (int64, bool) {
	if b == nil {
		return 0, false
	}
	n, ok := b.next[key]
	if ok {
		b.next[key] = n + 1
	}
	return n + 1, ok
}

// Counted remembers n as the last number taken under key.
func (b *Batch) Counted(key string, n int64) {
	if b == nil {
		return
	}
	if b.next == nil {
		b.next = map[string]int64{}
	}
	b.next[key] = n
}

// Forget drops the numbers counted: a statement may have taken one.
func (b *Batch) Forget() {
	if b != nil {
		clear(b.next)
	}
}
