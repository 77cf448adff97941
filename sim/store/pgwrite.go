package store

import (
	"context"
	"database/sql"
	"sync"

	"idemlab/sim/store/member"
	"idemlab/sim/store/pgsql"
)

// Writing on PostgreSQL. Transactions that number a lab's rows go through
// that lab's writer (WriteLab): group commits, each taking the lab's lock
// first, so that the lab's writes run one batch at a time across every
// process, while other labs' writers run beside it on connections of
// their own. Other transactions run on their own, side by side (Write):
// PostgreSQL decides their conflicts (UNIQUE, ON CONFLICT, row locks) and
// groups their commits' log flushes itself. Every one begins with the
// lease step (lease.go).

// sqlKeyLock takes a key's advisory lock (a lab's) until the transaction
// ends; two keys that hash alike only wait on each other, never collide.
const sqlKeyLock = `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`

// labTurnStep takes a lab's lock ($2), in the first statement of the
// lab's writer's transactions, after the lease step. The numbers its batch
// will count on are read by the statement sent behind it in the same round
// trip (pgsql.Batch.Turn), prepared once per connection like every
// statement: lab_turn could read them itself (its second argument)
// only through dynamic SQL in a subtransaction, which cost the database
// more than the rest of the batch's first round trip (migration 10).
const labTurnStep = `lab_turn($2, NULL)`

// The first statements of the writing transactions: a lab's writer's
// (the lease, the lab's lock and numbers), and the others' (the lease).
const (
	sqlLabFirst  = "SELECT " + txStep + ", " + leaseStep + ", " + labTurnStep
	sqlHoldFirst = "SELECT " + txStep + ", " + leaseStep
)

// deadlockRetries is how many times a writing transaction that PostgreSQL
// chose to break a deadlock with runs again: it rolled back whole.
const deadlockRetries = 3

// pgWrites are a PostgreSQL store's writing transactions: the labs being
// written to now have a writer each, which goes when its last transaction
// is done, so they are as many as the labs written to at once.
type pgWrites struct {
	s     *Store
	mu    sync.Mutex
	labs  map[string]*labWriter
	asked pgsql.Asked // the numberings the labs' batches ask for, asked together
}

type labWriter struct {
	w     *writer
	users int // transactions queued or running
}

// lab runs fn through the lab's writer.
func (p *pgWrites) lab(ctx context.Context, lab string, fn func(*Tx) error) error {
	lw := p.take(lab)
	defer p.done(lab, lw)
	return lw.w.run(ctx, fn)
}

func (p *pgWrites) take(lab string) *labWriter {
	p.mu.Lock()
	defer p.mu.Unlock()
	lw := p.labs[lab]
	if lw == nil {
		s := p.s
		lw = &labWriter{w: &writer{db: s.w, first: p.labStep(lab), settle: p.settle, asked: &p.asked, announce: s.tw.announce}}
		p.labs[lab] = lw
	}
	lw.users++
	return lw
}

func (p *pgWrites) done(lab string, lw *labWriter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if lw.users--; lw.users == 0 {
		delete(p.labs, lab)
	}
}

// labStep is the first statement of a lab's writer's transactions: the
// lease step, then the lab's lock and the numbers its batch counts on.
func (p *pgWrites) labStep(lab string) firstStep {
	return func(b *pgsql.Batch) (first, error) {
		var held, locked any
		st, err := p.s.m.Hold(sqlLabFirst, lab)
		st.Into = []any{&held, &locked}
		f := first{st: st}
		if q := b.Turn(); q != "" {
			turn := new(sql.NullString)
			f.then = []pgsql.Statement{{Query: q, Args: []any{lab}, Into: []any{turn}}}
			f.after = func() { b.CountedTurn(lab, *turn) }
		}
		return f, err
	}
}

// holdStep is the first statement of a writing transaction that numbers
// nothing: the lease step alone.
func (p *pgWrites) holdStep(*pgsql.Batch) (first, error) {
	var held any
	st, err := p.s.m.Hold(sqlHoldFirst)
	st.Into = []any{&held}
	return first{st: st}, err
}

// write runs fn in a writing transaction of its own, beside the others.
func (p *pgWrites) write(ctx context.Context, fn func(*Tx) error) error {
	for try := 0; ; try++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := p.once(ctx, fn)
		if pgsql.Code(err) != "40P01" || try == deadlockRetries {
			return err
		}
	}
}

// once is one try of write.
func (p *pgWrites) once(ctx context.Context, fn func(*Tx) error) (err error) {
	tx, xid, err := begin(ctx, p.s.w, nil, p.holdStep, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	var told []Told
	an := p.s.tw.announce.Load()
	t := &Tx{ctx: ctx, tx: tx}
	if an != nil {
		t.told, t.an = &told, an
	}
	if err := call(fn, t); err != nil {
		return err
	}
	_, err = tx.(*pgsql.Tx).Commit(ctx, an.statements(told))
	return p.settle(xid, err)
}

// staleTries is how many times a writing transaction begins, on another
// connection each time, when its first statement finds the connection
// ended: more than the pool keeps idle (openPostgres), so that a pool
// whose every connection a restart ended still writes.
const staleTries = 10

// firstStep is a writing transaction's first statement (PostgreSQL's),
// for the batch its jobs will share (nil: a transaction of its own).
type firstStep func(*pgsql.Batch) (first, error)

// first is a first statement, whose row goes into its Into after the
// transaction's id; then are statements sent behind it in the same round
// trip; after runs once they are read.
type first struct {
	st    pgsql.Statement
	then  []pgsql.Statement
	after func()
}

// begin begins a writing transaction on PostgreSQL (a *pgsql.Tx) with its
// first statements (step's) in the same round trip as BEGIN, and returns
// the transaction's id from them. A connection the database ended while it
// lay in the pool (a restart) fails at its first use; nothing of the
// transaction has run then, so it begins again on another.
func begin(ctx context.Context, db *sql.DB, opts *sql.TxOptions, step firstStep, b *pgsql.Batch) (txn, int64, error) {
	for try := 1; ; try++ {
		f, err := step(b)
		if err != nil {
			return nil, 0, err
		}
		var xid int64
		f.st.Into = append([]any{&xid}, f.st.Into...)
		tx, err := pgsql.Begin(ctx, db, opts, append([]pgsql.Statement{f.st}, f.then...)...)
		if err == nil {
			if f.after != nil {
				f.after()
			}
			return tx, xid, nil
		}
		if err = member.Refused(err); try == staleTries || ctx.Err() != nil || !pgsql.Ended(err) {
			return nil, 0, err
		}
	}
}
