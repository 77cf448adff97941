package pgtest

import (
	"database/sql"
	"testing"
)

// A cluster of the test's own keeps its data through a fast restart and a
// stop and start, on the same address.
func TestClusterRestarts(t *testing.T) {
	c := Cluster(t)
	db, err := sql.Open("pgx", c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(0) // a connection of before a restart is gone after it
	if _, err := db.Exec(`CREATE TABLE kept (n int); INSERT INTO kept VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	count := func(when string) {
		t.Helper()
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM kept`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("%s: %d rows, %v; want 1", when, n, err)
		}
	}
	var enc string
	if err := db.QueryRow(`SHOW server_encoding`).Scan(&enc); err != nil || enc != "UTF8" {
		t.Errorf("server_encoding %q, %v; want UTF8", enc, err)
	}
	if err := c.Restart("fast"); err != nil {
		t.Fatal(err)
	}
	count("after a fast restart")
	if err := c.Stop("fast"); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(); err == nil {
		t.Error("the stopped server answered")
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	count("after a stop and a start")
}
