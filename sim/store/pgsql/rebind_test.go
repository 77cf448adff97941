package pgsql

import "testing"

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		`SELECT 1`:                                  `SELECT 1`,
		`SELECT a FROM t WHERE x = ? AND y = ?`:     `SELECT a FROM t WHERE x = $1 AND y = $2`,
		`INSERT INTO t VALUES (?1, ?2, ?1)`:         `INSERT INTO t VALUES ($1, $2, $1)`,
		`SELECT '?' FROM t WHERE x = ? AND y = '?'`: `SELECT '?' FROM t WHERE x = $1 AND y = '?'`,
		`SELECT ?12, ?3`:                            `SELECT $12, $3`,
	} {
		if got := Rebind(in); got != want {
			t.Errorf("Rebind(%q) = %q, want %q", in, got, want)
		}
	}
}

// Plain makes bare the placeholders numbered in order, each once, and
// leaves any other statement as it is.
func TestPlain(t *testing.T) {
	for q, want := range map[string]string{
		`INSERT INTO t VALUES (?1, ?2, 'a?3', ?3)`:      `INSERT INTO t VALUES (?, ?, 'a?3', ?)`,
		`INSERT INTO t VALUES ($1, $2), ($3, $4)`:       `INSERT INTO t VALUES (?, ?), (?, ?)`,
		`SELECT * FROM t WHERE a = ?1 AND b = ?1`:       `SELECT * FROM t WHERE a = ?1 AND b = ?1`,
		`SELECT * FROM t WHERE a = ?2 AND b = ?1`:       `SELECT * FROM t WHERE a = ?2 AND b = ?1`,
		`SELECT * FROM t WHERE a = ? AND b = ?2`:        `SELECT * FROM t WHERE a = ? AND b = ?2`,
		`SELECT '$1', x$ FROM t WHERE a = ?1`:           `SELECT '$1', x$ FROM t WHERE a = ?`,
		`SELECT 1`:                                      `SELECT 1`,
		`UPDATE t SET a = CASE WHEN a < ?2 THEN ?2 END`: `UPDATE t SET a = CASE WHEN a < ?2 THEN ?2 END`,
	} {
		if got := Plain(q); got != want {
			t.Errorf("Plain(%q) = %q, want %q", q, got, want)
		}
	}
}
