package pgsql

import (
	"context"
	"database/sql"
	"errors"
	"slices"
)

// Batch is what the jobs of one group commit share besides the
// transaction: the writes held back for the commit, when it holds them
// (Hold: a PostgreSQL lab writer's first run of a batch), and the numbers
// counted in memory. Its methods take a nil Batch (a transaction of its
// own) as one that holds and counts nothing.
type Batch struct {
	Hold  bool
	Asked *Asked // the batch's writer's numberings; nil: none remembered
	Each  Runner // SQLite: the held writes go a statement each (FlushEach), and the numbers asked through it
	Pending
	next   map[number][]int64
	turn   []asked // the numberings its first statement asked for (Turn)
	Failed error   // a flush of held writes failed: the batch is to run again
}

// Holding reports whether the batch holds its writes.
func (b *Batch) Holding() bool { return b != nil && b.Hold }

// Flush runs the held writes, and remembers its failure in Failed.
func (b *Batch) Flush(ctx context.Context, tx Session) error {
	if b == nil || b.Len() == 0 {
		return nil
	}
	flush := func() error { return b.Pending.Flush(ctx, tx) }
	if b.Each != nil {
		flush = func() error { return b.Pending.FlushEach(ctx, b.Each) }
	}
	if err := flush(); err != nil {
		b.Failed = err
		return err
	}
	return nil
}

// after is the numbers after the last counted under key, if they were.
func (b *Batch) after(key number) ([]int64, bool) {
	if b == nil {
		return nil, false
	}
	ns, ok := b.next[key]
	for i := range ns {
		ns[i]++
	}
	return slices.Clone(ns), ok
}

// counted remembers ns as the last numbers taken under key.
func (b *Batch) counted(key number, ns []int64) {
	if b == nil {
		return
	}
	if b.next == nil {
		b.next = map[number][]int64{}
	}
	b.next[key] = slices.Clone(ns)
}

// Forget drops the numbers counted: a statement may have taken one.
func (b *Batch) Forget() {
	if b != nil {
		clear(b.next)
	}
}

// intsRunner is a Runner that reads a row of integers itself: SQLite's
// writing transaction, through its compiled statements.
type intsRunner interface {
	Ints(ctx context.Context, query string, args ...any) ([]int64, error)
}

// Ints reads the one row of integers that query answers in tx.
func Ints(ctx context.Context, tx Runner, query string, args ...any) ([]int64, error) {
	if ir, ok := tx.(intsRunner); ok {
		return ir.Ints(ctx, query, args...)
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	ns, ptrs := make([]int64, len(cols)), make([]any, len(cols))
	for i := range ns {
		ptrs[i] = &ns[i]
	}
	if !rows.Next() {
		return nil, errors.Join(sql.ErrNoRows, rows.Err())
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	return ns, rows.Close()
}
