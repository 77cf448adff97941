package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"testing"
	"time"

	"idemlab/sim/clock"
	"idemlab/sim/pgtest"
)

// testLease is the lease of these tests: short, so that a lapse is seen in
// a second.
const testLease = 600 * time.Millisecond

// openMember opens a store on dsn with the test's lease, its renewals
// ticked by c (nil: the real clock); it closes when the test ends.
func openMember(t *testing.T, dsn string, c clock.Clock) *Store {
	t.Helper()
	return openLeased(t, dsn, testLease, c)
}

// admin is a connection of the test's own to the database.
func admin(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// leaseLeft is how long the process's lease still runs, by the database's
// clock (negative: it ended); ok is false when it has no row.
func leaseLeft(t *testing.T, db *sql.DB, id string) (left time.Duration, ok bool) {
	t.Helper()
	var ms int64
	err := db.QueryRow(`SELECT lease_until - db_ms() FROM processes WHERE id = $1`, id).Scan(&ms)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(ms) * time.Millisecond, true
}

// eventually polls cond every 10 ms for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// dbMS is the database's clock, in unix milliseconds.
func dbMS(t *testing.T, db *sql.DB) (ms int64) {
	t.Helper()
	if err := db.QueryRow(`SELECT db_ms()`).Scan(&ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

// endSessions ends every other session on the database, as a restart of
// PostgreSQL does.
func endSessions(t *testing.T, db *sql.DB) {
	t.Helper()
	if _, err := db.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
}

// A process takes its lease as it opens the database and renews it on its
// clock's ticks. Unrenewed, the lease lapses: a write is refused by the
// database itself, in the transaction's first statement (the process
// believes it still holds it), with an error the web answers 503; renewed,
// writes go on. A row taken away (the process given up for dead) is taken
// again by the next renewal; a restart of PostgreSQL (every session ended)
// takes nothing away.
func TestLeaseTakenRenewedLost(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	ctx := context.Background()
	fake := clock.NewFake(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	s, db := openMember(t, dsn, fake), admin(t, dsn)
	write := func() error {
		_, err := s.Exec(ctx, `INSERT INTO health (id, at) VALUES (1, 0) ON CONFLICT (id) DO UPDATE SET at = health.at + 1`)
		return err
	}
	isolated := func() error { return s.Isolated(ctx, true, func(tx *Tx) error { return tx.LockKey("a lab") }) }

	left, ok := leaseLeft(t, db, s.Process())
	if !ok || left <= 0 || left > testLease {
		t.Fatalf("after Open: lease left %s (row %v), want within (0, %s]", left, ok, testLease)
	}
	until := func() (ms int64) {
		if err := db.QueryRow(`SELECT lease_until FROM processes WHERE id = $1`, s.Process()).Scan(&ms); err != nil {
			t.Fatal(err)
		}
		return ms
	}
	taken := until()
	// A renewal moves the lease's end once the database's clock has moved.
	eventually(t, testLease, "the database's clock past the lease taken", func() bool {
		return dbMS(t, db) > taken-testLease.Milliseconds()
	})
	fake.Advance(testLease / 3) // a renewal
	eventually(t, testLease, "the lease renewed", func() bool { return until() > taken })

	// No renewal for a lease: it lapses, and the database refuses.
	eventually(t, 2*testLease, "the lease lapsed", func() bool { l, _ := leaseLeft(t, db, s.Process()); return l < 0 })
	for name, w := range map[string]func() error{"the writer": write, "Isolated": isolated} {
		if err := w(); !IsLeaseLost(err) || !IsUnavailable(err) || !IsAnswered(err) {
			t.Errorf("%s with the lease lapsed: %v; want the lease lost (unavailable, the database's answer)", name, err)
		}
	}
	fake.Advance(testLease / 3)
	eventually(t, testLease, "writes again after a renewal", func() bool { return write() == nil && isolated() == nil })

	// The row taken away: refused, then taken again.
	if _, err := db.Exec(`DELETE FROM processes WHERE id = $1`, s.Process()); err != nil {
		t.Fatal(err)
	}
	if err := write(); !IsLeaseLost(err) {
		t.Errorf("a write with the row gone: %v, want the lease lost", err)
	}
	fake.Advance(testLease / 3)
	eventually(t, testLease, "the lease taken again", func() bool { return write() == nil })

	// A restart of PostgreSQL: the lease stays; a write goes through once
	// the pool has connected again.
	endSessions(t, db)
	eventually(t, 5*time.Second, "a write after every session ended", func() bool { return write() == nil })
	if l, ok := leaseLeft(t, db, s.Process()); !ok || l <= 0 {
		t.Errorf("after every session ended: lease left %s (row %v), want current", l, ok)
	}
}

// A process that knows its lease has run out (no renewal answered within
// it) refuses its writes itself, without asking the database.
func TestLeaseLostKnownLocally(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	fake := clock.NewFake(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	s := openMember(t, dsn, fake)
	s.m.Stop() // no more renewals
	fake.Advance(testLease)
	_, err := s.Exec(context.Background(), `UPDATE health SET at = 1`)
	if !errors.Is(err, ErrLeaseLost) || !IsUnavailable(err) {
		t.Errorf("a write after the lease ran out by the process's clock: %v, want ErrLeaseLost", err)
	}
	if s.Lead(context.Background()) {
		t.Error("a process without a lease leads")
	}
}

// The live process that took its lease first leads. When it stops renewing
// (killed), another leads within the lease and a renewal; a lease later
// its row is taken away and its work mended, in one transaction, by a live
// process. Every session ended (a restart of PostgreSQL) changes nothing;
// one that leaves (Close) passes the lead at once.
func TestLeaderFromLeases(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	ctx := context.Background()
	db := admin(t, dsn)
	a := openMember(t, dsn, nil)
	var aStarted int64
	if err := db.QueryRow(`SELECT started_at FROM processes WHERE id = $1`, a.Process()).Scan(&aStarted); err != nil {
		t.Fatal(err)
	}
	eventually(t, testLease, "the database's clock past a's start", func() bool { return dbMS(t, db) > aStarted }) // b starts after a
	b := openMember(t, dsn, nil)
	c := openMember(t, dsn, nil)
	mended := make(chan string, 10)
	for _, s := range []*Store{b, c} {
		s.Mending(func(tx *Tx) error {
			var n int
			err := tx.QueryRow(`SELECT COUNT(*) FROM processes WHERE id = ?`, a.Process()).Scan(&n)
			if err == nil && n == 0 {
				mended <- "a"
			}
			return err
		})
	}
	leaders := func() (out []bool) {
		for _, s := range []*Store{a, b, c} {
			out = append(out, s.Lead(ctx))
		}
		return out
	}
	eventually(t, testLease, "a leads alone", func() bool { l := leaders(); return l[0] && !l[1] && !l[2] })

	ended := dbMS(t, db)
	endSessions(t, db)
	eventually(t, 2*testLease, "every process renewed after the sessions ended", func() bool {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM processes WHERE lease_until - $1 > $2`, testLease.Milliseconds(), ended).Scan(&n); err != nil {
			return false // its own session may have ended too
		}
		return n == 3
	})
	if l := leaders(); !l[0] || l[1] || l[2] {
		t.Errorf("after every session ended, leaders %v; want a alone still", l)
	}

	a.m.Stop() // killed: it renews no more
	stopped := time.Now()
	eventually(t, testLease+testLease/3+500*time.Millisecond, "b leads once a's lease ended", func() bool {
		l := leaders()
		return !l[0] && l[1] && !l[2]
	})
	t.Logf("b leads %s after a stopped renewing (lease %s)", time.Since(stopped).Round(10*time.Millisecond), testLease)
	select {
	case <-mended:
	case <-time.After(3 * testLease):
		t.Fatal("a's row was not taken away, nor its work mended, two leases after it stopped")
	}
	// The mending runs in the transaction that takes a's row away: its
	// commit follows.
	eventually(t, testLease, "a's row gone once its work was mended", func() bool {
		_, ok := leaseLeft(t, db, a.Process())
		return !ok
	})

	b.Close()
	eventually(t, testLease, "c leads once b left", func() bool { return c.Lead(ctx) })
	if _, ok := leaseLeft(t, db, b.Process()); ok {
		t.Error("b's row is still there after it left")
	}
}

// A writing transaction holds its process's row until it ends: a process
// that stopped renewing while one of its writes was open is not taken
// away (nor its work mended) before that write has committed or rolled
// back, however long ago its lease ended; then it is.
func TestOpenWriteKeepsItsProcessRow(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	ctx := context.Background()
	db := admin(t, dsn)
	b, c := openMember(t, dsn, nil), openMember(t, dsn, nil)
	c.Mending(func(*Tx) error { return nil })
	held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	t.Cleanup(letGo) // before the stores close: a failure does not leave b's transaction open
	go func() {
		// Isolated: its lab's lock comes at the end (Tx.LockKey): the
		// writer's lock is a lab's alone, so that c may write
		// meanwhile.
		done <- b.Isolated(ctx, false, func(tx *Tx) error {
			close(held)
			<-release
			if err := tx.LockKey("a lab"); err != nil {
				return err
			}
			_, err := tx.Exec(`UPDATE health SET at = 1`)
			return err
		})
	}()
	<-held
	b.m.Stop() // b renews no more: its lease ends, and a lease later it is dead
	eventually(t, 4*testLease, "b's lease ended a lease ago", func() bool { l, _ := leaseLeft(t, db, b.Process()); return l < -testLease })
	if err := c.MendDead(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := leaseLeft(t, db, b.Process()); !ok {
		t.Fatal("b's row was taken away while a write of b's was open")
	}
	letGo()
	if err := <-done; err != nil {
		t.Errorf("b's write, begun with its lease current: %v", err)
	}
	if err := c.MendDead(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := leaseLeft(t, db, b.Process()); ok {
		t.Error("b's row is still there once its write ended")
	}
}
