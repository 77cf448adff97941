package idempotency

import (
	"context"
	"strings"
	"testing"

	"idemlab/sim/store"
)

// The keys panel reads a lab's newest UNIQUE keys through the index of the
// payments that have one, not through all its payments: on SQLite, whose
// planner has no statistics, the plan says so.
func TestUniqueKeysReadThroughTheirIndex(t *testing.T) {
	t.Parallel()
	if got := strings.Join(explain(t, SQLUniqueKeys, "a", 20), "; "); !strings.Contains(got, "payments_recent_unique") {
		t.Errorf("the newest UNIQUE keys are read by %q; want the index payments_recent_unique", got)
	}
}

// The sweeper and the keys panel read a lab's records through their index
// by expiry, never by scanning the table: on SQLite, whose planner has no
// statistics, the plans say so. A key's lookup keeps to the primary key.
func TestRecordsReadThroughTheirIndexByExpiry(t *testing.T) {
	t.Parallel()
	const index = "idempotency_records_by_expiry"
	for _, tc := range []struct {
		name, query, want string
		args              []any
	}{
		{"the next lab and scope, and its earliest to expire", sqlNextScope, index, []any{"a", "charges", 1}},
		{"the expired deleted", sqlSweep, index, []any{"a", "charges", 1, 10}},
		{"the keys panel", sqlKeys, index, []any{"a", "charges", 20}},
		{"a key's lookup", sqlRecord, "PRIMARY KEY", []any{"a", "charges", "k"}},
	} {
		steps := explain(t, tc.query, tc.args...)
		plan := strings.Join(steps, "; ")
		if !strings.Contains(plan, tc.want) || scanned(steps, "idempotency_records") {
			t.Errorf("%s: the plan is %q; want %s, no scan of the table", tc.name, plan, tc.want)
		}
	}
}

// scanned reports whether a step of the plan reads the whole table (or a
// whole index of it).
func scanned(steps []string, table string) bool {
	for _, s := range steps {
		if s == "SCAN "+table || strings.HasPrefix(s, "SCAN "+table+" ") {
			return true
		}
	}
	return false
}

// explain is the steps of SQLite's plan of the query, on an empty database
// of the newest schema.
func explain(t *testing.T, query string, args ...any) []string {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.Query(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan
}
