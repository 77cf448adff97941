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
	"strconv"
	"strings"
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

// Flush runs the held writes in tx and empties p. It fails, with
// ErrNotWritten when a statement wrote fewer rows than it carried, on the
// first statement that fails: the transaction is then to roll back.
func (p *Pending) Flush(ctx context.Context, tx *sql.Tx) error {
	texts, rows, finals := p.texts, p.rows, p.final
	*p = Pending{}
	for _, q := range texts {
		for rs := rows[q]; len(rs) > 0; {
			per := max(1, maxParams/max(1, len(rs[0])))
			chunk := rs[:min(per, len(rs))]
			rs = rs[len(chunk):]
			if err := execRows(ctx, tx, q, chunk); err != nil {
				return err
			}
		}
	}
	for _, f := range finals {
		if err := written(tx.ExecContext(ctx, f.query, f.args...))(1); err != nil {
			return err
		}
	}
	return nil
}

// written checks that a statement's result wrote want rows.
func written(res sql.Result, err error) func(want int) error {
	return func(want int) error {
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n != int64(want) {
			return fmt.Errorf("%w: %d of %d", ErrNotWritten, n, want)
		}
		return nil
	}
}

func execRows(ctx context.Context, tx *sql.Tx, q string, rows [][]any) error {
	folded, err := Fold(q, len(rows))
	if err != nil {
		return err
	}
	args := make([]any, 0, len(rows)*len(rows[0]))
	for _, r := range rows {
		args = append(args, r...)
	}
	return written(tx.ExecContext(ctx, folded, args...))(len(rows))
}

// Fold makes of a single-row INSERT, `INSERT ... VALUES (row) rest`, the
// same statement with n rows: the row's placeholders (?1 … ?m, each
// numbered) become $1 … $m in the first, $m+1 … $2m in the second, and so
// on, so that the arguments go row after row. Every placeholder must be in
// the row; rest (ON CONFLICT, RETURNING) takes its values from excluded.
func Fold(q string, n int) (string, error) {
	at := valuesAt(q)
	if at < 0 {
		return "", fmt.Errorf("pgsql: fold: no VALUES in %.80q", q)
	}
	end := closing(q, at)
	if end < 0 {
		return "", fmt.Errorf("pgsql: fold: the row of %.80q does not close", q)
	}
	row, rest := q[at:end+1], q[end+1:]
	if strings.Contains(unquoted(rest), "?") || strings.Contains(unquoted(q[:at]), "?") {
		return "", fmt.Errorf("pgsql: fold: a placeholder outside the row of %.80q", q)
	}
	m, err := placeholders(row)
	if err != nil {
		return "", fmt.Errorf("pgsql: fold %.80q: %w", q, err)
	}
	var b strings.Builder
	b.Grow(len(q) + (n-1)*(len(row)+8))
	b.WriteString(q[:at])
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		renumber(&b, row, r*m)
	}
	b.WriteString(rest)
	return b.String(), nil
}

// valuesAt is where the row after the first VALUES outside quotes opens.
func valuesAt(q string) int {
	u := strings.ToUpper(unquoted(q))
	i := strings.Index(u, "VALUES")
	if i < 0 {
		return -1
	}
	j := strings.IndexByte(u[i:], '(')
	if j < 0 {
		return -1
	}
	return i + j
}

// closing is where the parenthesis that opens at i closes.
func closing(q string, i int) int {
	depth, quoted := 0, false
	for ; i < len(q); i++ {
		switch c := q[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// unquoted is q with its quoted text blanked, of the same length.
func unquoted(q string) string {
	b := []byte(q)
	quoted := false
	for i, c := range b {
		if c == '\'' {
			quoted = !quoted
		} else if quoted {
			b[i] = ' '
		}
	}
	return string(b)
}

// placeholders is the highest ?N in row; a bare ? is refused, being
// numbered by its place in the whole statement.
func placeholders(row string) (int, error) {
	m := 0
	u := unquoted(row)
	for i := 0; i < len(u); i++ {
		if u[i] != '?' {
			continue
		}
		j := i + 1
		for j < len(u) && u[j] >= '0' && u[j] <= '9' {
			j++
		}
		if j == i+1 {
			return 0, errors.New("a bare ? (number it)")
		}
		k, _ := strconv.Atoi(u[i+1 : j])
		m = max(m, k)
	}
	return m, nil
}

// renumber writes row with each ?k as $(k+by).
func renumber(b *strings.Builder, row string, by int) {
	u := unquoted(row)
	for i := 0; i < len(row); i++ {
		if u[i] != '?' {
			b.WriteByte(row[i])
			continue
		}
		j := i + 1
		for j < len(u) && u[j] >= '0' && u[j] <= '9' {
			j++
		}
		k, _ := strconv.Atoi(u[i+1 : j])
		b.WriteString("$" + strconv.Itoa(k+by))
		i = j - 1
	}
}
