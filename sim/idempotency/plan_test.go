package idempotency_test

import (
	"context"
	"strings"
	"testing"

	"idemlab/sim"
	"idemlab/sim/idempotency"
)

// The keys panel reads a lab's newest UNIQUE keys through the index of the
// payments that have one, not through all its payments: on SQLite, whose
// planner has no statistics, the plan says so.
func TestUniqueKeysReadThroughTheirIndex(t *testing.T) {
	b := openHouse(t, ":memory:")
	l := b.NewLab(t, sim.ProtectNone, nil)
	rows, err := b.H.Store.Query(context.Background(), "EXPLAIN QUERY PLAN "+idempotency.SQLUniqueKeys, l.ID, 20)
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
	if got := strings.Join(plan, "; "); !strings.Contains(got, "payments_recent_unique") {
		t.Errorf("the newest UNIQUE keys are read by %q; want the index payments_recent_unique", got)
	}
}
