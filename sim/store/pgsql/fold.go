package pgsql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Fold makes of a single-row INSERT, `INSERT ... VALUES (row) rest`, the
// same statement with n rows: the row's placeholders (?1 … ?m, each
// numbered) become $from+1 … $from+m in the first, $from+m+1 … in the
// second, and so on, so that the arguments go row after row. Every
// placeholder must be in the row; rest (ON CONFLICT) takes its values from
// excluded, and returns nothing: a held write is counted by its rows.
func Fold(q string, n, from int) (string, error) {
	r, err := rowOf(q)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(q) + (n-1)*(len(r.row)+8))
	b.WriteString(r.head)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		renumber(&b, r.row, r.urow, from+i*r.m)
	}
	b.WriteString(r.rest)
	return b.String(), nil
}

// insertRow is a single-row INSERT taken apart for Fold: what comes before
// its row, the row (and its unquoted text, with m placeholders), and what
// comes after.
type insertRow struct {
	head, row, urow, rest string
	m                     int
}

// rows keeps the INSERTs taken apart, by their text: a program's held
// writes are a few constant texts, taken apart once each, not in every
// batch. Past maxRows texts, the others are taken apart each time.
var rows struct {
	sync.Mutex
	of map[string]insertRow
}

const maxRows = 256

// rowOf is q taken apart (Fold), or why it cannot be folded.
func rowOf(q string) (insertRow, error) {
	rows.Lock()
	r, ok := rows.of[q]
	rows.Unlock()
	if ok {
		return r, nil
	}
	r, err := takeApart(q)
	if err != nil {
		return r, err
	}
	rows.Lock()
	defer rows.Unlock()
	if rows.of == nil {
		rows.of = make(map[string]insertRow)
	}
	if len(rows.of) < maxRows {
		rows.of[q] = r
	}
	return r, nil
}

// takeApart is rowOf without its memory.
func takeApart(q string) (insertRow, error) {
	u := unquoted(q) // where placeholders and parentheses are looked for
	at := valuesAt(u)
	if at < 0 {
		return insertRow{}, fmt.Errorf("pgsql: fold: no VALUES in %.80q", q)
	}
	end := closing(u, at)
	if end < 0 {
		return insertRow{}, fmt.Errorf("pgsql: fold: the row of %.80q does not close", q)
	}
	if strings.Contains(u[end+1:], "?") || strings.Contains(u[:at], "?") {
		return insertRow{}, fmt.Errorf("pgsql: fold: a placeholder outside the row of %.80q", q)
	}
	if strings.Contains(strings.ToUpper(u[end+1:]), "RETURNING") {
		return insertRow{}, fmt.Errorf("pgsql: fold: a held write returns nothing: %.80q", q)
	}
	m, err := placeholders(u[at : end+1])
	if err != nil {
		return insertRow{}, fmt.Errorf("pgsql: fold %.80q: %w", q, err)
	}
	return insertRow{head: q[:at], row: q[at : end+1], urow: u[at : end+1], rest: q[end+1:], m: m}, nil
}

// valuesAt is where the row after the first VALUES of u (unquoted) opens.
func valuesAt(u string) int {
	u = strings.ToUpper(u)
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

// closing is where the parenthesis of u (unquoted) that opens at i closes.
func closing(u string, i int) int {
	depth := 0
	for ; i < len(u); i++ {
		switch u[i] {
		case '(':
			depth++
		case ')':
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

// placeholderAt reads the placeholder at u[i] ('?'): its number (0 for a
// bare ?) and where it ends.
func placeholderAt(u string, i int) (k, end int) {
	end = i + 1
	for end < len(u) && u[end] >= '0' && u[end] <= '9' {
		end++
	}
	k, _ = strconv.Atoi(u[i+1 : end])
	return k, end
}

// placeholders is the highest ?N in u (unquoted); a bare ? is refused,
// being numbered by its place in the whole statement.
func placeholders(u string) (int, error) {
	m := 0
	for i := strings.IndexByte(u, '?'); i >= 0; {
		k, end := placeholderAt(u, i)
		if k == 0 {
			return 0, errors.New("a bare ? (number it)")
		}
		m = max(m, k)
		next := strings.IndexByte(u[end:], '?')
		if next < 0 {
			break
		}
		i = end + next
	}
	return m, nil
}

// renumber writes q, whose unquoted text is u, with each ?k as $(k+by).
func renumber(b *strings.Builder, q, u string, by int) {
	for i := 0; i < len(q); i++ {
		if u[i] != '?' {
			b.WriteByte(q[i])
			continue
		}
		k, end := placeholderAt(u, i)
		var n [20]byte
		b.WriteByte('$')
		b.Write(strconv.AppendInt(n[:0], int64(k+by), 10))
		i = end - 1
	}
}
