// Package pgsql is the store's PostgreSQL text: the placeholders of the
// store's statements (written in SQLite's) rebound to PostgreSQL's, and a
// transaction's single-row writes held back and folded into one
// multi-row statement each (Pending), so that a group commit of many
// small transactions costs a few round trips instead of one a statement.
package pgsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// maxParams bounds the placeholders of one folded statement, well inside
// PostgreSQL's 65,535.
const maxParams = 30000

// ErrNotWritten is what a held write gets when it did not write its row:
// a conflict its statement leaves alone (ON CONFLICT ... WHERE).
var ErrNotWritten = errors.New("store: a row was not written")

// Pending is a transaction's writes held until the transaction must see
// them. Each is a single-row INSERT (Fold says which texts are) that must
// write its row; Flush runs them as one statement per text, in the order
// each text first came, each statement with every row of its text. Writes
// of one text therefore go in together, before those of a text that came
// later: a held write must not depend on another held write of a later text.
// The zero value is empty.
type Pending struct {
	texts []string
	rows  map[string][][]any
	final []final // Finally's, after the rows
}

// final is a statement that Finally holds.
type final struct {
	query string
	key   any
	args  []any
}

// Add holds the single-row INSERT query with its arguments.
func (p *Pending) Add(query string, args ...any) {
	if p.rows == nil {
		p.rows = map[string][][]any{}
	}
	if _, ok := p.rows[query]; !ok {
		p.texts = append(p.texts, query)
	}
	p.rows[query] = append(p.rows[query], args)
}

// Finally holds a statement that makes final what the held writes count,
// such as setting a counter to the highest number they took: run after
// them, and of the statements of one text and one first argument only the
// last held. It must write one row.
func (p *Pending) Finally(query string, args ...any) {
	for i, f := range p.final {
		if f.query == query && f.key == args[0] {
			p.final[i].args = args
			return
		}
	}
	p.final = append(p.final, final{query, args[0], args})
}

// Len is how many writes are held.
func (p *Pending) Len() int {
	n := len(p.final)
	for _, rows := range p.rows {
		n += len(rows)
	}
	return n
}

// Flush runs the held writes in tx and empties p: as one statement
// (data-modifying WITH queries, one each text and each Finally, on one
// snapshot; more than one only past maxParams). It fails on the first
// statement that fails, with ErrNotWritten when a part of it wrote fewer
// rows than it carried: the transaction is then to roll back.
func (p *Pending) Flush(ctx context.Context, tx Session) error {
	sts, err := p.Statements()
	if err != nil {
		return err
	}
	for _, st := range sts {
		if _, err := tx.ExecContext(ctx, st.Query, st.Args...); err != nil {
			return NotWritten(err)
		}
	}
	return nil
}

// Statement is one statement of held writes (Pending.Statements): it
// fails (held_written, SQLSTATE IL002) unless each of its parts wrote
// every row it carried, so that a COMMIT sent behind it in the same round
// trip commits nothing when it did not.
type Statement struct {
	Query string // PostgreSQL's placeholders
	Args  []any
	Into  []any // where its one row goes; nil for a statement read for its success alone
}

// Statements are the held writes as the statements Flush runs, and empty p.
func (p *Pending) Statements() ([]Statement, error) {
	texts, rows, finals := p.texts, p.rows, p.final
	*p = Pending{}
	var (
		st  statement
		out []Statement
	)
	for _, q := range texts {
		for rs := rows[q]; len(rs) > 0; {
			per := max(1, maxParams/max(1, len(rs[0])))
			chunk := rs[:min(per, len(rs))]
			rs = rs[len(chunk):]
			if st.params()+len(chunk)*len(chunk[0]) > maxParams {
				out = append(out, st.done())
			}
			text, err := Fold(q, len(chunk), st.params())
			if err != nil {
				return nil, err
			}
			st.add(text, len(chunk), chunk...)
		}
	}
	for _, f := range finals {
		var b strings.Builder
		renumber(&b, f.query, unquoted(f.query), st.params())
		st.add(b.String(), 1, f.args)
	}
	if len(st.rows) > 0 {
		out = append(out, st.done())
	}
	return out, nil
}

// NotWritten is err, marked ErrNotWritten when it is held_written's
// (SQLSTATE IL002): a held write that did not write its row.
func NotWritten(err error) error {
	if Code(err) == notWrittenCode {
		return fmt.Errorf("%w: %w", ErrNotWritten, err)
	}
	return err
}

// notWrittenCode is held_written's SQLSTATE (migration 11).
const notWrittenCode = "IL002"

// Runner runs statements in a batch's transaction: on PostgreSQL its
// connection, on SQLite the writer's transaction, through its statements
// compiled on the connection.
type Runner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Session is where a transaction's statements run: SQLite's writing
// transaction on its connection, or on PostgreSQL the connection the
// transaction began on (*sql.Conn).
type Session interface {
	Runner
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// FlushEach is Flush for a database without data-modifying WITH queries
// (SQLite, whose statements are no round trip): each text's rows go in
// statements of their own, a power of two rows each (1, 2, 4 … so that a
// few texts serve every batch, each compiled once), then each Finally
// alone, all in the order Flush keeps. It fails as Flush does.
func (p *Pending) FlushEach(ctx context.Context, r Runner) error {
	texts, rows, finals := p.texts, p.rows, p.final
	*p = Pending{}
	for _, q := range texts {
		for rs := rows[q]; len(rs) > 0; {
			n := 1
			for n*2 <= len(rs) && n*2*len(rs[0]) <= maxParams {
				n *= 2
			}
			text, err := folded(q, n)
			if err != nil {
				return err
			}
			args := make([]any, 0, n*len(rs[0]))
			for _, r := range rs[:n] {
				args = append(args, r...)
			}
			if err := writeRows(ctx, r, n, text, args); err != nil {
				return err
			}
			rs = rs[n:]
		}
	}
	for _, f := range finals {
		if err := writeRows(ctx, r, 1, f.query, f.args); err != nil {
			return err
		}
	}
	return nil
}

// maxFolds bounds the folded texts remembered: a few held texts, each in a
// few powers of two.
const maxFolds = 256

// folds is the texts FlushEach has folded, by text and rows.
var folds struct {
	sync.Mutex
	m map[fold]string
}

type fold struct {
	q string
	n int
}

// folded is Fold(q, n, 0), folded once.
func folded(q string, n int) (string, error) {
	folds.Lock()
	text, ok := folds.m[fold{q, n}]
	folds.Unlock()
	if ok {
		return text, nil
	}
	text, err := Fold(q, n, 0)
	if err != nil {
		return "", err
	}
	text = Plain(text)
	folds.Lock()
	defer folds.Unlock()
	if folds.m == nil {
		folds.m = map[fold]string{}
	}
	if len(folds.m) < maxFolds {
		folds.m[fold{q, n}] = text
	}
	return text, nil
}

// writeRows runs a statement that must write n rows.
func writeRows(ctx context.Context, r Runner, n int, query string, args []any) error {
	res, err := r.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	got, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if got != int64(n) {
		return fmt.Errorf("%w: %d of %d", ErrNotWritten, got, n)
	}
	return nil
}

// statement is what a flush sends at once: its parts, each to write rows.
type statement struct {
	with strings.Builder
	args []any
	rows []int
}

func (s *statement) params() int { return len(s.args) }

// add adds a part whose placeholders are numbered after the others', with
// the arguments of its rows, row after row.
func (s *statement) add(text string, rows int, args ...[]any) {
	if len(s.rows) == 0 {
		s.with.WriteString("WITH ")
	} else {
		s.with.WriteString(", ")
	}
	fmt.Fprintf(&s.with, "w%d AS (%s RETURNING 1)", len(s.rows), text)
	for _, a := range args {
		s.args = append(s.args, a...)
	}
	s.rows = append(s.rows, rows)
}

// done is the statement, its parts' rows checked by held_written, and
// empties s.
func (s *statement) done() Statement {
	counts := make([]string, len(s.rows))
	want := make([]int64, len(s.rows))
	for i, n := range s.rows {
		counts[i] = fmt.Sprintf("(SELECT count(*) FROM w%d)", i)
		want[i] = int64(n)
	}
	st := Statement{
		Query: fmt.Sprintf("%s SELECT held_written(ARRAY[%s], $%d::bigint[])", s.with.String(), strings.Join(counts, ", "), len(s.args)+1),
		Args:  append(s.args, want),
	}
	*s = statement{}
	return st
}
