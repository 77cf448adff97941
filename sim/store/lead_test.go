package store

import (
	"context"
	"strings"
	"testing"

	"idemlab/sim/logtest"
	"idemlab/sim/pgtest"
)

// openLogged opens a store on dsn with the test's lease, its log kept.
func openLogged(t *testing.T, dsn string) (*Store, *logtest.Buffer) {
	t.Helper()
	l := &logtest.Buffer{}
	s, err := OpenWith(context.Background(), dsn, Options{Lease: testLease, Log: l.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, l
}

// leadsLine is what a process logs when it takes the lead.
const leadsLine = "this process leads"

// A process says in its log when it takes the lead, once, and the lead is
// what its /healthz reports (Lead): an operator can tell which process of
// several relays the queue. One that leaves passes the lead, and the next
// says so.
func TestLeadIsLogged(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	ctx := context.Background()
	db := admin(t, dsn)
	a, aLog := openLogged(t, dsn)
	eventually(t, testLease, "a leads", func() bool { return a.Lead(ctx) })
	b, bLog := openLogged(t, dsn) // its start renewed its lease once
	if b.Lead(ctx) || strings.Count(bLog.String(), leadsLine) != 0 {
		t.Errorf("b, started after a: leads %v, its log says so %d times; want neither", b.Lead(ctx), strings.Count(bLog.String(), leadsLine))
	}
	var until int64
	for range 3 { // a's renewals, each of which found it leading
		eventually(t, testLease, "a renewed", func() bool {
			var u int64
			db.QueryRow(`SELECT lease_until FROM processes WHERE id = $1`, a.Process()).Scan(&u)
			if u > until {
				until = u
				return true
			}
			return false
		})
	}
	if n := strings.Count(aLog.String(), leadsLine); n != 1 {
		t.Errorf("a's log says %d times that it leads; want once, for all its renewals", n)
	}
	a.Close()
	eventually(t, 2*testLease, "b leads once a left", func() bool { return b.Lead(ctx) })
	eventually(t, testLease, "b's log says it leads", func() bool { return strings.Count(bLog.String(), leadsLine) == 1 })
}
