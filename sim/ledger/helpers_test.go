package ledger_test

import (
	"context"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/sim/ledger"
	"idemlab/sim/pgtest"
	"idemlab/sim/store"
)

// start is where every fake clock of these tests starts: a whole second,
// so that times kept in milliseconds compare exactly.
var start = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

// eachStore runs f on SQLite, and again on a database of its own in the
// PostgreSQL of $IDEMLAB_TEST_POSTGRES (skipped without it): the
// protections are the database's constraints, so each runs on both.
func eachStore(t *testing.T, f func(t *testing.T, dsn func(testing.TB) string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, func(testing.TB) string { return ":memory:" }) })
	t.Run("postgres", func(t *testing.T) {
		pgtest.Server(t)
		f(t, pgtest.Database)
	})
}

// lab is the house on a fake clock.
type lab struct {
	h     *house.House
	clock *clock.Fake
}

// openHouse opens the whole lab, with the embedded key-value store of
// set-nx, on the database dsn names and a fake clock; everything closes
// when the test ends.
func openHouse(t *testing.T, dsn string) lab {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	fake := clock.NewFake(start)
	h, err := house.Open(ctx, house.Config{Store: db, Clock: fake, KV: true})
	if err != nil {
		t.Fatalf("open the house: %v", err)
	}
	t.Cleanup(h.Close)
	return lab{h: h, clock: fake}
}

// newLab makes a private lab under protection p with no waits of its own
// (no work, no gap), so that a charge never waits on the fake clock; set
// changes the rest.
func (b lab) newLab(t *testing.T, p sim.Protection, set func(*sim.Settings)) *labs.Lab {
	t.Helper()
	s := sim.DefaultSettings()
	s.Protection, s.CheckGapMS, s.ServerDelayMS, s.LockTimeoutMS = p, 0, 0, 5000
	if set != nil {
		set(&s)
	}
	l, err := b.h.Labs.Create(context.Background(), labs.KindPrivate, s)
	if err != nil {
		t.Fatalf("create a lab: %v", err)
	}
	return l
}

// payments is how many payments the lab's ledger holds, read from its rows.
func (b lab) payments(t *testing.T, l *labs.Lab) int {
	t.Helper()
	ps, err := b.h.Ledger.Payments(context.Background(), l, 1000, 0)
	if err != nil {
		t.Fatalf("payments: %v", err)
	}
	return len(ps)
}

// told is what a charge's result told the client, in one word: its
// outcome, or the code of its error.
func told(res ledger.Result, err error) string {
	if err != nil {
		return string(sim.ErrorCode(err))
	}
	return string(res.Outcome)
}

// breakPayments makes the database refuse every new payment, as a full
// disk would, until mendPayments: a failure the server sees.
func (b lab) breakPayments(t *testing.T) {
	t.Helper()
	stmts := []string{`CREATE TRIGGER fail_payments BEFORE INSERT ON payments BEGIN SELECT RAISE(ABORT, 'the disk is full'); END`}
	if b.h.Store.Postgres() {
		stmts = []string{
			`CREATE FUNCTION fail_payments() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RAISE EXCEPTION ''the disk is full''; END'`,
			`CREATE TRIGGER fail_payments BEFORE INSERT ON payments FOR EACH ROW EXECUTE FUNCTION fail_payments()`,
		}
	}
	b.exec(t, stmts...)
}

// mendPayments undoes breakPayments.
func (b lab) mendPayments(t *testing.T) {
	t.Helper()
	if b.h.Store.Postgres() {
		b.exec(t, `DROP TRIGGER fail_payments ON payments`, `DROP FUNCTION fail_payments()`)
		return
	}
	b.exec(t, `DROP TRIGGER fail_payments`)
}

func (b lab) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := b.h.Store.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// key returns a pointer to k, or nil for "".
func key(k string) *string {
	if k == "" {
		return nil
	}
	return &k
}

// waitFor polls cond until it holds, or fails the test after a while: the
// one way these tests wait for another goroutine (a racer that has set its
// timer on the fake clock).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
