package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"idemlab/sim/pgtest"
)

// A process keeping a part to itself does not join another; one sharing
// every part does not join one that keeps a part; processes that share
// everything run together. A process whose lease ended a lease ago is no
// obstacle: it died.
func TestJoinRefusesPartsKeptBesideAnother(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	ctx := context.Background()
	a := openMember(t, dsn, nil)
	if err := a.Join(ctx, nil); err != nil || !a.Alone() {
		t.Fatalf("the first process joins: %v, alone %v", err, a.Alone())
	}
	b := openMember(t, dsn, nil)
	var crowd *Crowded
	if err := b.Join(ctx, []string{"kv"}); !errors.As(err, &crowd) || len(crowd.Mine) != 1 || crowd.Mine[0] != "kv" {
		t.Errorf("a process keeping kv beside another: %v, want Crowded naming kv", err)
	}
	if err := b.Join(ctx, nil); err != nil || b.Alone() {
		t.Errorf("a process sharing everything beside another: %v, alone %v; want joined, not alone", err, b.Alone())
	}
	b.Close()
	a.Close()

	k := openMember(t, dsn, nil)
	if err := k.Join(ctx, []string{"broker", "kv"}); err != nil {
		t.Fatalf("a process alone keeping its parts: %v", err)
	}
	d := openMember(t, dsn, nil)
	if err := d.Join(ctx, nil); !errors.As(err, &crowd) || len(crowd.Theirs) != 2 {
		t.Errorf("a process beside one keeping broker and kv: %v, want Crowded naming theirs", err)
	}
	k.m.Stop() // killed
	began := time.Now()
	if err := d.Join(ctx, nil); err != nil {
		t.Errorf("beside a process that stopped renewing: %v, want joined once it died", err)
	}
	if waited := time.Since(began); waited > 3*testLease {
		t.Errorf("joined %s after the other stopped renewing, want within 3 leases", waited)
	}
}
