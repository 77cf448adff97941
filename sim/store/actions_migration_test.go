package store_test

import (
	"os"
	"path/filepath"
	"testing"
)

// SQLite's migration 12 makes lab_actions one B-tree: every recorded
// action is kept, in its lab's order, the table has no rowid beside its
// primary key, and removing a lab still removes its actions.
func TestActionsBecomeOneTree(t *testing.T) {
	t.Parallel()
	step, err := os.ReadFile("schema/migrations/sqlite/0012_actions_one_tree.sql")
	if err != nil {
		t.Fatal(err)
	}
	db := rawSQLite(t, filepath.Join(t.TempDir(), "v11.db")+"?_pragma=foreign_keys(1)")
	for _, q := range []string{
		`CREATE TABLE labs (id TEXT PRIMARY KEY)`,
		`CREATE TABLE lab_actions (lab_id TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE, seq INTEGER NOT NULL, action TEXT NOT NULL, PRIMARY KEY (lab_id, seq))`,
		`INSERT INTO labs VALUES ('A'), ('B')`,
		`INSERT INTO lab_actions VALUES ('A', 2, '{"kind":"direct"}'), ('B', 1, '{"kind":"base"}'), ('A', 1, '{"kind":"base"}')`,
		string(step),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.50s: %v", q, err)
		}
	}
	var got string
	if err := db.QueryRow(`SELECT group_concat(lab_id || seq || action, ' ') FROM (SELECT * FROM lab_actions ORDER BY lab_id, seq)`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := `A1{"kind":"base"} A2{"kind":"direct"} B1{"kind":"base"}`; got != want {
		t.Errorf("the actions after the migration: %s, want %s", got, want)
	}
	if _, err := db.Exec(`SELECT rowid FROM lab_actions`); err == nil {
		t.Error("lab_actions still has a rowid")
	}
	if _, err := db.Exec(`DELETE FROM labs WHERE id = 'A'`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM lab_actions`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d actions after lab A was removed (%v), want B's one", n, err)
	}
}
