package store_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"idemlab/sim/pgtest"
	"idemlab/sim/store"
)

// columns reads a database's tables and their columns, each column's type
// as a class (integer, text, bytes), so that the dialects' spellings of a
// type compare equal: SQLite keeps a boolean as an integer, 0 or 1.
func columns(t *testing.T, db *sql.DB, postgres bool) map[string]string {
	t.Helper()
	q := `SELECT m.name, p.name, p.type FROM sqlite_schema m JOIN pragma_table_info(m.name) p
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`
	if postgres {
		q = `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()`
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var table, column, typ string
		if err := rows.Scan(&table, &column, &typ); err != nil {
			t.Fatal(err)
		}
		out[table+"."+column] = class(typ)
	}
	return out
}

func class(typ string) string {
	switch t := strings.ToLower(typ); {
	case strings.Contains(t, "int") || t == "boolean":
		return "integer"
	case t == "blob" || t == "bytea":
		return "bytes"
	}
	return "text"
}

// fresh is the schema of a new SQLite database.
func fresh(t *testing.T) map[string]string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fresh.db")
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	return columns(t, rawSQLite(t, path), false)
}

func rawSQLite(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Both dialects' migrations end with the same tables and columns, of the
// same kinds: the lab's SQL, written once, runs on either.
func TestBothDialectsEndAlike(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	s, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	pg, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if diff := cmp.Diff(fresh(t), columns(t, pg, true)); diff != "" {
		t.Errorf("SQLite's schema (-) and PostgreSQL's (+) differ:\n%s", diff)
	}
}

// A file of every version of the days before the numbered migrations (the
// frozen schemas in testdata) migrates, its rows kept and their text times
// made the same instants in unix milliseconds: it ends with the schema of a
// new file, and opens again as it is.
func TestLegacyFilesMigrate(t *testing.T) {
	t.Parallel()
	want := fresh(t)
	const at = "2026-11-29T00:00:01.5Z"
	for _, tc := range []struct {
		version int
		payment string // one payment of the lab, in the version's columns
	}{
		{1, `INSERT INTO payments VALUES (5, 'AAAAAAAAAAAAAAAAAAAAAA', 'order-42', 1500, NULL, NULL, '` + at + `')`},
		{2, `INSERT INTO payments (lab_id, n, order_id, amount, created_at) VALUES ('AAAAAAAAAAAAAAAAAAAAAA', 5, 'order-42', 1500, '` + at + `')`},
		{3, `INSERT INTO payments (lab_id, n, order_id, amount, created_at) VALUES ('AAAAAAAAAAAAAAAAAAAAAA', 5, 'order-42', 1500, '` + at + `')`},
		{4, `INSERT INTO payments (lab_id, n, order_id, amount, created_at) VALUES ('AAAAAAAAAAAAAAAAAAAAAA', 5, 'order-42', 1500, '` + at + `')`},
	} {
		t.Run("version "+strconv.Itoa(tc.version), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "old.db")
			schema, err := os.ReadFile("../../testdata/schema_v" + strconv.Itoa(tc.version) + ".sql")
			if err != nil {
				t.Fatal(err)
			}
			raw := rawSQLite(t, path)
			for _, q := range []string{string(schema), `PRAGMA user_version = ` + strconv.Itoa(tc.version),
				`INSERT INTO labs (id, settings, created_at) VALUES ('AAAAAAAAAAAAAAAAAAAAAA', '{}', '2026-11-29T00:00:00Z')`, tc.payment} {
				if _, err := raw.Exec(q); err != nil {
					t.Fatalf("%.40s: %v", q, err)
				}
			}
			raw.Close()
			for range 2 { // and again: a migrated file opens as it is
				s, err := store.Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
			}
			db := rawSQLite(t, path)
			if diff := cmp.Diff(want, columns(t, db, false)); diff != "" {
				t.Errorf("a file of version %d migrated (+) against a new one (-):\n%s", tc.version, diff)
			}
			var got int64
			if err := db.QueryRow(`SELECT created_at FROM payments WHERE n = 5`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if w := time.Date(2026, 11, 29, 0, 0, 1, 5e8, time.UTC).UnixMilli(); got != w {
				t.Errorf("the payment's time: %d, want %d (%s)", got, w, at)
			}
		})
	}
}

// A database of a newer program than this one is refused, not changed.
func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new.db")
	s, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw := rawSQLite(t, path)
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if s, err := store.Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "newer") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("open a database of schema 999: %v, want refused as newer", err)
	}
}

// A PostgreSQL database of the days before the numbered migrations (its
// schema applied at every start, times as text) migrates, rows kept.
func TestLegacyPostgresMigrates(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	schema, err := os.ReadFile("../../testdata/schema_pg_v4.sql")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for _, q := range []string{string(schema),
		`INSERT INTO labs (id, settings, created_at) VALUES ('AAAAAAAAAAAAAAAAAAAAAA', '{}', '2026-11-29T00:00:00Z')`,
		`INSERT INTO payments (lab_id, n, order_id, amount, created_at) VALUES ('AAAAAAAAAAAAAAAAAAAAAA', 5, 'order-42', 1500, '2026-11-29T00:00:01.5Z')`} {
		if _, err := pg.Exec(q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	s, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if diff := cmp.Diff(fresh(t), columns(t, pg, true)); diff != "" {
		t.Errorf("a legacy PostgreSQL database migrated (+) against a new SQLite file (-):\n%s", diff)
	}
	var got int64
	if err := pg.QueryRow(`SELECT created_at FROM payments WHERE n = 5`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if w := time.Date(2026, 11, 29, 0, 0, 1, 5e8, time.UTC).UnixMilli(); got != w {
		t.Errorf("the payment's time: %d, want %d", got, w)
	}
}
