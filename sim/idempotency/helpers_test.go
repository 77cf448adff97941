package idempotency_test

import (
	"fmt"
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
		if c := sim.ErrorCode(err); c != sim.EInternal {
			return string(c)
		}
		return fmt.Sprintf("internal: %v", err)
	}
	return string(res.Outcome)
}

// key returns a pointer to k, or nil for "".
func key(k string) *string {
	if k == "" {
		return nil
	}
	return &k
}
