package stmts

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// writer opens a SQLite file as the store's writer has it (one
// connection), with the statements compiled on it.
func writer(t *testing.T) (*sql.DB, *Raw) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "raw.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (n INTEGER PRIMARY KEY, s TEXT, b BLOB, f REAL, ok INTEGER)`); err != nil {
		t.Fatal(err)
	}
	raw := new(Raw)
	t.Cleanup(func() { raw.Close(db) }) // before the database closes
	return db, raw
}

// begin begins a writing transaction on db's connection.
func begin(t *testing.T, db *sql.DB, raw *Raw) *WriteTx {
	t.Helper()
	tx, err := Begin(context.Background(), db, raw)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// A transaction on the driver's connection reads what database/sql reads,
// row for row, in every kind a ledger's rows hold, NULL included; it
// commits, it rolls back, and a statement that does not compile still says
// its error.
func TestWriteTxReadsAsDatabaseSQLDoes(t *testing.T) {
	ctx := context.Background()
	db, raw := writer(t)
	tx := begin(t, db, raw)
	for _, r := range [][]any{{1, "one", []byte("b1"), 1.5, true}, {2, nil, nil, nil, false}} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO t (n, s, b, f, ok) VALUES (?1, ?2, ?3, ?4, ?5)`, r...); err != nil {
			t.Fatal(err)
		}
	}
	var (
		n          int64
		s          sql.NullString
		b          []byte
		f          sql.NullFloat64
		ok         bool
		anyS, anyB any
	)
	if err := tx.QueryRow(ctx, `SELECT n, s, b, f, ok, s, b FROM t WHERE n = ?`, 1).Scan(&n, &s, &b, &f, &ok, &anyS, &anyB); err != nil {
		t.Fatal(err)
	}
	if n != 1 || s.String != "one" || string(b) != "b1" || f.Float64 != 1.5 || !ok || anyS != "one" || string(anyB.([]byte)) != "b1" {
		t.Errorf("row 1 = %d %v %q %v %v %v %v", n, s, b, f, ok, anyS, anyB)
	}
	if err := tx.QueryRow(ctx, `SELECT n, s, b, f, ok FROM t WHERE n = ?`, 2).Scan(&n, &s, &b, &f, &ok); err != nil {
		t.Fatal(err)
	}
	if n != 2 || s.Valid || b != nil || f.Valid || ok {
		t.Errorf("row 2 = %d %v %q %v %v", n, s, b, f, ok)
	}
	var str string
	if err := tx.QueryRow(ctx, `SELECT s FROM t WHERE n = 2`).Scan(&str); err == nil {
		t.Error("a NULL scanned into a string")
	}
	if err := tx.QueryRow(ctx, `SELECT n FROM t WHERE n = 3`).Scan(&n); !errors.Is(err, sql.ErrNoRows) {
		t.Errorf("no row: %v, want sql.ErrNoRows", err)
	}
	if ns, err := tx.Ints(ctx, `SELECT MAX(n), COUNT(*) FROM t`); err != nil || len(ns) != 2 || ns[0] != 2 || ns[1] != 2 {
		t.Errorf("Ints = %v, %v; want [2 2]", ns, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO nowhere VALUES (1)`); err == nil {
		t.Error("a statement on a missing table ran")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("a rollback after the commit: %v, want sql.ErrTxDone", err)
	}

	tx = begin(t, db, raw)
	if _, err := tx.ExecContext(ctx, `DELETE FROM t`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	var count int
	if err := db.QueryRow(`SELECT COUNT(*) FROM t`).Scan(&count); err != nil || count != 2 {
		t.Errorf("%d rows (%v) after a commit of two and a rolled back delete; want 2", count, err)
	}
	if raw.Len() == 0 {
		t.Error("nothing compiled on the connection")
	}
}

// The bytes a row answers are the reader's own: the same compiled
// statement run again does not change them (the driver copies each blob,
// which assign counts on).
func TestRowBytesAreTheReadersOwn(t *testing.T) {
	ctx := context.Background()
	db, raw := writer(t)
	tx := begin(t, db, raw)
	defer tx.Rollback()
	for i, v := range []string{"first", "other"} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO t (n, b) VALUES (?, ?)`, i, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	var first, other []byte
	if err := tx.QueryRow(ctx, `SELECT b FROM t WHERE n = ?`, 0).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, `SELECT b FROM t WHERE n = ?`, 1).Scan(&other); err != nil {
		t.Fatal(err)
	}
	if string(first) != "first" || string(other) != "other" {
		t.Errorf("read %q and %q; want first and other", first, other)
	}
}
