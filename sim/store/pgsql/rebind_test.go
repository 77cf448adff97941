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
