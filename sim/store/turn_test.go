package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"idemlab/sim/pgtest"
)

// lab_turn (PostgreSQL) reads a batch's numbers through a statement it
// prepares once per connection: each call reads what committed before it,
// past the plan cache's switch to a generic plan (after five runs), in a
// transaction that rolled back too, and the connection keeps one statement
// per query, not one per call.
func TestLabTurnReadsFreshNumbersThroughItsStatement(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	openSteady(t, dsn) // the migrations
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE turned (lab TEXT, n BIGINT)`); err != nil {
		t.Fatal(err)
	}
	const numbers = `SELECT COALESCE(MAX(n), 0), count(*) FROM turned WHERE lab = $1`
	for i := 1; i <= 8; i++ {
		if _, err := conn.Exec(ctx, `INSERT INTO turned VALUES ('a', $1), ('b', $2)`, i, 100+i); err != nil {
			t.Fatal(err)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var row string
		err = tx.QueryRow(ctx, `SELECT lab_turn($1, $2)`, "a", numbers).Scan(&row)
		tx.Rollback(ctx)
		if want := fmt.Sprintf("(%d,%d)", i, i); err != nil || row != want {
			t.Fatalf("call %d: %q, %v; want %q", i, row, err, want)
		}
	}
	var prepared int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'lab_turn_%'`).Scan(&prepared); err != nil || prepared != 1 {
		t.Errorf("statements prepared for lab_turn: %d, %v; want 1", prepared, err)
	}
}
