package idempotency

import (
	"context"
	"strings"
	"testing"

	"idemlab/sim/store"
)

// The sweeper and the keys panel read a lab's records through their index
// by expiry, never by scanning the table: on SQLite, whose planner has no
// statistics, the plans say so. A key's lookup keeps to the primary key.
func TestRecordsReadThroughTheirIndexByExpiry(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
		plan := explain(t, s, tc.query, tc.args...)
		if !strings.Contains(plan, tc.want) || strings.Contains(plan, "SCAN idempotency_records ") || strings.HasSuffix(plan, "SCAN idempotency_records") {
			t.Errorf("%s: the plan is %q; want %s, no scan of the table", tc.name, plan, tc.want)
		}
	}
}

// explain is SQLite's plan of the query, its steps joined.
func explain(t *testing.T, s *store.Store, query string, args ...any) string {
	t.Helper()
	rows, err := s.Query(context.Background(), "EXPLAIN QUERY PLAN "+query, args...)
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
	return strings.Join(plan, "; ")
}
