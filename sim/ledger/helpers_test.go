package ledger_test

import (
	"context"
	"testing"

	"idemlab/sim"
	"idemlab/sim/housetest"
	"idemlab/sim/ledger"
)

// eachStore runs f on SQLite, and on PostgreSQL where there is one.
var eachStore = housetest.EachStore

// lab is the house on a fake clock, with this package's helpers.
type lab struct{ housetest.House }

// openHouse opens the whole lab on the database dsn names and a fake clock.
func openHouse(t *testing.T, dsn string) lab { return lab{housetest.Open(t, dsn)} }

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
	if b.H.Store.Postgres() {
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
	if b.H.Store.Postgres() {
		b.exec(t, `DROP TRIGGER fail_payments ON payments`, `DROP FUNCTION fail_payments()`)
		return
	}
	b.exec(t, `DROP TRIGGER fail_payments`)
}

func (b lab) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := b.H.Store.Exec(context.Background(), q); err != nil {
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
