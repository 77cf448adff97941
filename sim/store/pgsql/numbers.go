package pgsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// maxAsked bounds the numberings a writer remembers: a lab's batches ask
// for a few (a payment's, an action's).
const maxAsked = 8

// Asked is the numberings that batches have asked for (Numbers), so that
// a batch asks for all of them in one statement when it first asks for
// one: the labs' batches ask alike, each with the lab's id, and each ask
// is a round trip. A numbering is remembered by its text; a batch asks
// those that take as many arguments as the one it asks for, with its
// arguments. It is safe for concurrent use.
type Asked struct {
	mu sync.Mutex
	qs []asked
	// turn is Turn's statement for the numberings of one argument, and
	// those numberings: made once each time qs changes, not in every batch.
	turn struct {
		text string
		of   []asked
	}
}

// asked is one numbering: its query, how many arguments it takes, and how
// many numbers its row has.
type asked struct {
	query      string
	args, cols int
}

func (a *Asked) known(query string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.ContainsFunc(a.qs, func(q asked) bool { return q.query == query })
}

func (a *Asked) note(q asked) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m, err := placeholders(unquoted(q.query)); err != nil || m != q.args || slices.Contains(a.qs, q) {
		return // asked alone: its placeholders cannot be numbered after others'
	}
	if len(a.qs) == maxAsked {
		a.qs = a.qs[1:]
	}
	a.qs = append(a.qs, q)
	a.turn.text, a.turn.of = "", nil
}

// lab is Turn's statement and the numberings it asks for ("" when there
// are none).
func (a *Asked) lab() (string, []asked) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.turn.text == "" {
		a.turn.of = a.likeLocked(1)
		var q strings.Builder
		for i, n := range a.turn.of {
			if i == 0 {
				q.WriteString("SELECT (SELECT row(n.*)::text FROM (SELECT * FROM ")
			} else {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "(%s) AS n%d", Rebind(n.query), i)
		}
		if len(a.turn.of) > 0 {
			q.WriteString(") AS n)")
		}
		a.turn.text = q.String()
	}
	return a.turn.text, a.turn.of
}

// like is the numberings that take n arguments.
func (a *Asked) like(n int) []asked {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.likeLocked(n)
}

// likeLocked is like, with a.mu held.
func (a *Asked) likeLocked(n int) []asked {
	var qs []asked
	for _, q := range a.qs {
		if q.args == n {
			qs = append(qs, q)
		}
	}
	return qs
}

// Numbers is the numbers after the highest that query (numbered
// placeholders) answers, a row of integers, for rows the transaction is
// about to write: asked of the database the first time in the batch,
// then counted on in memory (Next) until Forget. The held writes go
// first. When the batch's writer has asked for other numberings before,
// they are asked in the same statement.
func (b *Batch) Numbers(ctx context.Context, tx Session, query string, args ...any) ([]int64, error) {
	key := numbering(query, args)
	if ns, ok := b.after(key); ok {
		return ns, nil
	}
	if err := b.Flush(ctx, tx); err != nil {
		return nil, err
	}
	if b != nil && b.Asked != nil && b.Asked.known(query) {
		ns, err := b.askAll(ctx, tx, query, args)
		if !errors.Is(err, sql.ErrNoRows) && !errors.Is(err, errAlone) {
			return ns, err
		}
		// One of them answers no row with these arguments: ask alone.
	}
	ns, err := Ints(ctx, b.runner(tx), query, args...)
	if err != nil {
		return nil, err
	}
	if b != nil && b.Asked != nil {
		b.Asked.note(asked{query, len(args), len(ns)})
	}
	for i := range ns {
		ns[i]++
	}
	b.counted(key, ns)
	return ns, nil
}

// runner is what runs the batch's statements in tx.
func (b *Batch) runner(tx Session) Runner {
	if b != nil && b.Each != nil {
		return b.Each
	}
	return tx
}

// numbering is what the numbers of query with args are counted under.
func numbering(query string, args []any) number {
	if len(args) == 1 { // a lab's id, most often: no string made of it
		if s, ok := args[0].(string); ok {
			return number{query, s}
		}
	}
	return number{query, fmt.Sprint(args...)}
}

// number is a numbering with its arguments, written as fmt.Sprint writes
// them: what a batch counts its numbers under.
type number struct{ query, args string }

// askAll asks for every numbering remembered that takes as many
// arguments as query, with args, in one statement, and takes the first
// numbers of query's.
func (b *Batch) askAll(ctx context.Context, tx Session, query string, args []any) ([]int64, error) {
	qs := b.Asked.like(len(args))
	var (
		q   strings.Builder
		all []any
	)
	q.WriteString("SELECT * FROM ")
	for i, a := range qs {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(")
		renumber(&q, a.query, unquoted(a.query), len(all))
		fmt.Fprintf(&q, ") AS n%d", i)
		all = append(all, args...)
	}
	row, err := Ints(ctx, b.runner(tx), q.String(), all...)
	if err != nil {
		return nil, err
	}
	var mine []int64
	for _, a := range qs {
		if len(row) < a.cols {
			return nil, fmt.Errorf("pgsql: numbers: %d columns, want %d more", len(row), a.cols)
		}
		ns := row[:a.cols:a.cols]
		row = row[a.cols:]
		if a.query == query {
			for i := range ns {
				ns[i]++
			}
			mine = ns
		}
		b.counted(numbering(a.query, args), ns) // the highest taken; the next ask counts on
	}
	if mine == nil {
		return nil, errAlone
	}
	return mine, nil
}

// errAlone is askAll's word that the numbering is to be asked alone: it
// was forgotten meanwhile.
var errAlone = errors.New("pgsql: ask alone")

// Turn is the statement that reads the numbers a lab's batch asks for in
// its first round trip, behind the one that takes the lab's lock
// (lab_turn): every numbering remembered that takes one argument, the
// lab's id, in one query whose placeholders are all $1, its row as
// PostgreSQL writes a row of integers in text (NULL when it answers no
// row); "" when none is remembered. CountedTurn then takes that row.
func (b *Batch) Turn() string {
	if b == nil || b.Asked == nil {
		return ""
	}
	text, of := b.Asked.lab()
	b.turn = of
	return text
}

// CountedTurn counts on the row that Turn's query answered for lab, as
// PostgreSQL writes a row of integers: "(12,3,0)". A row that is not there
// (one of the numberings answers none) or cannot be read counts nothing:
// the batch asks when it needs a number, as it would have.
func (b *Batch) CountedTurn(lab string, row sql.NullString) {
	if b == nil || !row.Valid {
		return
	}
	fields := strings.Split(strings.TrimSuffix(strings.TrimPrefix(row.String, "("), ")"), ",")
	ns := make([]int64, len(fields))
	for i, f := range fields {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return
		}
		ns[i] = n
	}
	for _, a := range b.turn {
		if len(ns) < a.cols {
			return
		}
		b.counted(numbering(a.query, []any{lab}), ns[:a.cols:a.cols])
		ns = ns[a.cols:]
	}
}
