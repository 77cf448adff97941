package pgsql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Fold makes of a single-row INSERT, `INSERT ... VALUES (row) rest`, the
// same statement with n rows: the row's placeholders (?1 … ?m, each
// numbered) become $from+1 … $from+m in the first, $from+m+1 … in the
// second, and so on, so that the arguments go row after row. Every
// placeholder must be in the row; rest (ON CONFLICT) takes its values from
// excluded, and returns nothing: a held write is counted by its rows.
func Fold(q string, n, from int) (string, error) {
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
	if strings.Contains(strings.ToUpper(unquoted(rest)), "RETURNING") {
		return "", fmt.Errorf("pgsql: fold: a held write returns nothing: %.80q", q)
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
		renumber(&b, row, from+r*m)
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
