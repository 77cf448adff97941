package pgsql

import "testing"

func TestFold(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{`INSERT INTO t (a, b) VALUES (?1, ?2)`, 1, `INSERT INTO t (a, b) VALUES ($1, $2)`},
		{`INSERT INTO t (a, b) VALUES (?1, ?2)`, 3, `INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4), ($5, $6)`},
		{`INSERT INTO t (a, b, c) VALUES (?2, lower(?1), 'x?'')') ON CONFLICT (a) DO NOTHING`, 2,
			`INSERT INTO t (a, b, c) VALUES ($2, lower($1), 'x?'')'), ($4, lower($3), 'x?'')') ON CONFLICT (a) DO NOTHING`},
		{"INSERT INTO t (a)\nvalues (?1)", 2, "INSERT INTO t (a)\nvalues ($1), ($2)"},
		{`INSERT INTO t (a) VALUES (?1) ON CONFLICT DO NOTHING`, 2, `INSERT INTO t (a) VALUES ($1), ($2) ON CONFLICT DO NOTHING`},
	} {
		got, err := Fold(c.in, c.n, 0)
		if err != nil || got != c.want {
			t.Errorf("Fold(%q, %d) = %q, %v; want %q", c.in, c.n, got, err, c.want)
		}
	}
}

func TestFoldRefuses(t *testing.T) {
	for _, in := range []string{
		`UPDATE t SET a = ?1`,                                            // no row
		`INSERT INTO t (a) VALUES (?1`,                                   // unclosed
		`INSERT INTO t (a) VALUES (?)`,                                   // bare
		`INSERT INTO t (a) VALUES (?1) ON CONFLICT DO UPDATE SET a = ?2`, // outside the row
		`INSERT INTO t (a) VALUES (?1) RETURNING a`,                      // returns
	} {
		if got, err := Fold(in, 2, 0); err == nil {
			t.Errorf("Fold(%q) = %q; want an error", in, got)
		}
	}
}
