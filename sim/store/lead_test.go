package store

import (
	"context"
	"database/sql"
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

// leaderAndOther opens two stores on a database of their own, their logs
// kept: a, which leads, then b (whose start renewed its lease once); db is
// the database's admin connection.
func leaderAndOther(t *testing.T) (db *sql.DB, a, b *Store, aLog, bLog *logtest.Buffer) {
	t.Helper()
	dsn := pgtest.Database(t)
	db = admin(t, dsn)
	a, aLog = openLogged(t, dsn)
	eventually(t, testLease, "a leads", func() bool { return a.Lead(context.Background()) })
	b, bLog = openLogged(t, dsn)
	return db, a, b, aLog, bLog
}

// leadsLine is what a process logs when it takes the lead.
const leadsLine = "this process leads"

// A process says in its log when it takes the lead, once, and the lead is
// what its /healthz reports (Lead): an operator can tell which process of
// several relays the queue. One that leaves passes the lead, and the next
// says so.
func TestLeadIsLogged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, a, b, aLog, bLog := leaderAndOther(t)
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

// A process whose lease ran out while it lived (a pause longer than the
// lease: a stopped VM, a cut network) has lost its lead: the next renewal
// takes its lease anew, the newest, and another process that stayed leads.
// Both say so: the one in its /healthz and log, the other in its log,
// "another process leads now".
func TestLeadPassesWhenTheLeaseRunsOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, a, b, aLog, bLog := leaderAndOther(t)
	// a's lease ran out on the database's clock, as if it had paused
	if _, err := db.Exec(`UPDATE processes SET lease_until = db_ms() - 1 WHERE id = $1`, a.Process()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*testLease, "b leads", func() bool { return b.Lead(ctx) })
	eventually(t, 2*testLease, "a's log says another leads", func() bool {
		return strings.Count(aLog.String(), "another process leads now") == 1
	})
	if a.Lead(ctx) {
		t.Error("a still leads beside b after its lease ran out")
	}
	if n := strings.Count(bLog.String(), leadsLine); n != 1 {
		t.Errorf("b's log says %d times that it leads; want once", n)
	}
	if n := strings.Count(aLog.String(), leadsLine); n != 1 {
		t.Errorf("a's log says %d times that it leads; want once, before its lease ran out", n)
	}
}
