package store

import (
	"context"
	"sync"
)

// Writing on PostgreSQL. Transactions that number a lab's rows go through
// that lab's writer (WriteLab): group commits, each taking the lab's lock
// first, so that the lab's writes run one batch at a time across every
// process, while other labs' writers run beside it on connections of
// their own. Other transactions run on their own, side by side (Write):
// PostgreSQL decides their conflicts (UNIQUE, ON CONFLICT, row locks) and
// groups their commits' log flushes itself.

// sqlKeyLock takes a key's advisory lock (a lab's) until the transaction
// ends; two keys that hash alike only wait on each other, never collide.
const sqlKeyLock = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`

// deadlockRetries is how many times a writing transaction that PostgreSQL
// chose to break a deadlock with runs again: it rolled back whole.
const deadlockRetries = 3

// labWriters are the writers of the labs being written to now; a lab's
// goes when its last transaction is done, so they are as many as the labs
// written to at once.
type labWriters struct {
	mu sync.Mutex
	m  map[string]*labWriter
}

type labWriter struct {
	w     *writer
	users int // transactions queued or running
}

// pgWriteLab runs fn through the lab's writer.
func (s *Store) pgWriteLab(ctx context.Context, lab string, fn func(*Tx) error) error {
	lw := s.labs.take(s, lab)
	defer s.labs.done(lab, lw)
	return lw.w.run(ctx, fn)
}

func (ws *labWriters) take(s *Store, lab string) *labWriter {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	lw := ws.m[lab]
	if lw == nil {
		lw = &labWriter{w: &writer{db: s.w, lab: lab, lock: s.lock, savepoint: s.tw.savepoint, rollbackTo: s.tw.rollbackTo, release: s.tw.release}}
		ws.m[lab] = lw
	}
	lw.users++
	return lw
}

func (ws *labWriters) done(lab string, lw *labWriter) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if lw.users--; lw.users == 0 {
		delete(ws.m, lab)
	}
}

// pgWrite runs fn in a writing transaction of its own, beside the others.
func (s *Store) pgWrite(ctx context.Context, fn func(*Tx) error) error {
	for try := 0; ; try++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := s.pgOnce(ctx, fn)
		if pgCode(err) != "40P01" || try == deadlockRetries {
			return err
		}
	}
}

// pgOnce is one try of pgWrite.
func (s *Store) pgOnce(ctx context.Context, fn func(*Tx) error) (err error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if err := call(fn, &Tx{ctx: ctx, tx: tx, lock: s.lock}); err != nil {
		return err
	}
	return tx.Commit()
}
