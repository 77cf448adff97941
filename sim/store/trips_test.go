package store

import (
	"context"
	"net"
	"slices"
	"sync/atomic"
	"testing"

	"idemlab/sim/pgtest"
)

// A lab's batch on PostgreSQL is two round trips to the database once the
// connection has its statements prepared (SPEC: a charge costs at most two
// round trips, its batch's): BEGIN with the first statement (the lease,
// the lab's lock and numbers), then the held writes with COMMIT.
func TestLabBatchIsTwoRoundTrips(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	db := admin(t, dsn)
	if _, err := db.Exec(`CREATE TABLE trips (lab TEXT, n BIGINT, PRIMARY KEY (lab, n))`); err != nil {
		t.Fatal(err)
	}
	p := newTripCounter(t, dsn)
	s := openSteady(t, p.url)
	ctx := context.Background()
	write := func() error { // a charge's shape: a number counted in memory, a held row
		return s.WriteLab(ctx, "lab-a", func(tx *Tx) error {
			n, err := tx.Next(`SELECT COALESCE(MAX(n), 0) FROM trips WHERE lab = ?1`, "lab-a")
			if err != nil {
				return err
			}
			return tx.Later(`INSERT INTO trips (lab, n) VALUES (?1, ?2)`, "lab-a", n)
		})
	}
	for range 40 { // the statements prepared on the connections, the numbering remembered
		if err := write(); err != nil {
			t.Fatal(err)
		}
	}
	var trips []int64
	for range 30 {
		before := p.trips.Load()
		if err := write(); err != nil {
			t.Fatal(err)
		}
		trips = append(trips, p.trips.Load()-before)
	}
	slices.Sort(trips)
	if m := trips[len(trips)/2]; m != 2 { // the median: a lease's renewal may fall in one
		t.Errorf("a lab's batch of one charge took %d round trips (all: %v); want 2", m, trips)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM trips`).Scan(&n); err != nil || n != 70 {
		t.Errorf("%d rows (%v), want 70", n, err)
	}
}

// tripCounter passes PostgreSQL's connections through and counts their
// round trips: each time a client sends after the server last spoke.
type tripCounter struct {
	url   string
	trips atomic.Int64
}

func newTripCounter(t *testing.T, dsn string) *tripCounter {
	t.Helper()
	p := &tripCounter{}
	p.url = pgProxy(t, dsn, p.serve)
	return p
}

func (p *tripCounter) serve(c net.Conn, target string) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	var spoke atomic.Bool // the server spoke last
	spoke.Store(true)
	go func() {
		defer c.Close()
		copyNoting(c, s, func() { spoke.Store(true) })
	}()
	copyNoting(s, c, func() {
		if spoke.Swap(false) {
			p.trips.Add(1)
		}
	})
}

// copyNoting copies from src to dst, calling note before each write.
func copyNoting(dst, src net.Conn, note func()) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			note()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
