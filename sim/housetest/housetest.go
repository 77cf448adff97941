// Package housetest is what the rooms' tests share: the whole house on a
// fake clock, on SQLite and again on a PostgreSQL database of its own.
package housetest

import (
	"context"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/sim/pgtest"
	"idemlab/sim/store"
)

// Start is where every fake clock of these tests starts: a whole second,
// so that times kept in milliseconds compare exactly.
var Start = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

// EachStore runs f on SQLite, and again on a database of its own in the
// PostgreSQL of $IDEMLAB_TEST_POSTGRES (skipped without it): the
// protections are the database's constraints, so each runs on both.
func EachStore(t *testing.T, f func(t *testing.T, dsn func(testing.TB) string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, func(testing.TB) string { return ":memory:" }) })
	t.Run("postgres", func(t *testing.T) {
		pgtest.Server(t)
		f(t, pgtest.Database)
	})
}

// House is the house on a fake clock.
type House struct {
	H     *house.House
	Clock *clock.Fake
}

// Store opens the database dsn names, closed when the test ends.
func Store(t testing.TB, dsn string) *store.Store {
	t.Helper()
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Open opens the whole lab, with the embedded key-value store of set-nx,
// on the database dsn names and a fake clock; everything closes when the
// test ends.
func Open(t testing.TB, dsn string) House {
	t.Helper()
	db, fake := Store(t, dsn), clock.NewFake(Start)
	h, err := house.Open(context.Background(), house.Config{Store: db, Clock: fake, KV: true})
	if err != nil {
		t.Fatalf("open the house: %v", err)
	}
	t.Cleanup(h.Close)
	return House{H: h, Clock: fake}
}

// NewLab makes a private lab under protection p with no waits of its own
// (no work, no gap), so that a charge never waits on the fake clock; set
// changes the rest.
func (b House) NewLab(t testing.TB, p sim.Protection, set func(*sim.Settings)) *labs.Lab {
	t.Helper()
	s := sim.DefaultSettings()
	s.Protection, s.CheckGapMS, s.ServerDelayMS, s.LockTimeoutMS = p, 0, 0, 5000
	if set != nil {
		set(&s)
	}
	l, err := b.H.Labs.Create(context.Background(), labs.KindPrivate, s)
	if err != nil {
		t.Fatalf("create a lab: %v", err)
	}
	return l
}

// Payments is how many payments the lab's ledger holds, read from its rows.
func (b House) Payments(t *testing.T, l *labs.Lab) int {
	t.Helper()
	ps, err := b.H.Ledger.Payments(context.Background(), l, 1000, 0)
	if err != nil {
		t.Fatalf("payments: %v", err)
	}
	return len(ps)
}
