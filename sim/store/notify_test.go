package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"idemlab/sim"
	"idemlab/sim/pgtest"
)

// What a writing transaction tells the other processes goes out inside it:
// heard once it commits, in commit order, and never when it does not: a
// job of a group commit that fails takes its notices with its savepoint,
// and the others of its batch are heard.
func TestNoticesGoOutWithTheirCommit(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	ctx := context.Background()
	s, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn := listenTo(t, dsn)
	s.Announce("test_notices", func(ev sim.Event, _ int64) string { return ev.Lab }, nil)
	tell := func(lab string, fail error) func(*Tx) error {
		return func(tx *Tx) error {
			if _, err := tx.Exec(`SELECT 1`); err != nil {
				return err
			}
			tx.Notify(sim.Event{Lab: lab})
			return fail
		}
	}
	failure := errors.New("the job failed")
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // holds the lab's writer so that the others queue into one batch
		s.WriteLab(ctx, "a lab", func(tx *Tx) error { <-release; return tell("first", nil)(tx) })
	})
	waitLabQueued(t, s, "a lab", 0)
	var want []string
	for i := range 6 {
		lab, fail := "ok-"+string(rune('0'+i)), error(nil)
		if i%2 == 1 {
			lab, fail = "failed-"+string(rune('0'+i)), failure
		} else {
			want = append(want, lab)
		}
		wg.Go(func() {
			if err := s.WriteLab(ctx, "a lab", tell(lab, fail)); !errors.Is(err, fail) {
				t.Errorf("%s: %v, want %v", lab, err, fail)
			}
		})
		waitLabQueued(t, s, "a lab", i+1) // in this order
	}
	close(release)
	wg.Wait()
	if err := s.Write(ctx, tell("alone-failed", failure)); !errors.Is(err, failure) {
		t.Errorf("a failing transaction of its own: %v", err)
	}
	if err := s.Write(ctx, tell("last", nil)); err != nil {
		t.Fatal(err)
	}
	want = append([]string{"first"}, append(want, "last")...)
	if got := hearUntil(t, conn, "last"); !slices.Equal(got, want) {
		t.Errorf("heard %q, want %q", got, want)
	}

	s.Announce("test_notices", nil, nil) // nobody listens: nothing is told
	if err := s.Write(ctx, tell("untold", nil)); err != nil {
		t.Fatal(err)
	}
	s.Announce("test_notices", func(ev sim.Event, _ int64) string { return ev.Lab }, nil)
	if err := s.Write(ctx, tell("told again", nil)); err != nil {
		t.Fatal(err)
	}
	if got := hearUntil(t, conn, "told again"); !slices.Equal(got, []string{"told again"}) {
		t.Errorf("after the announcing stopped and started again: heard %q, want told again", got)
	}
}

// waitLabQueued waits until the lab's writer is busy with n transactions
// queued behind the one it runs.
func waitLabQueued(t *testing.T, s *Store, lab string, n int) {
	t.Helper()
	eventually(t, 5*time.Second, fmt.Sprintf("the writer of %s busy with %d queued", lab, n), func() bool {
		if s.pg == nil { // SQLite: one writer for all labs
			return s.tw.queued(n)
		}
		s.pg.mu.Lock()
		lw := s.pg.labs[lab]
		s.pg.mu.Unlock()
		return lw != nil && lw.w.queued(n)
	})
}

// listenTo opens a connection that listens on test_notices.
func listenTo(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(context.Background(), `LISTEN test_notices`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// hearUntil returns the payloads heard on conn up to last.
func hearUntil(t *testing.T, conn *pgx.Conn, last string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	for len(got) == 0 || got[len(got)-1] != last {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("heard %q, then: %v", got, err)
		}
		got = append(got, n.Payload)
	}
	return got
}

// On SQLite there is one process and nobody to tell: a transaction's
// notices are dropped, and the transaction commits as ever.
func TestNoticesOnSQLiteAreNobodys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openMemory(t)
	s.Announce("test_notices", func(ev sim.Event, _ int64) string { return ev.Lab }, nil)
	insert := testTable(t, s)
	if err := s.Write(ctx, func(tx *Tx) error {
		tx.Notify(sim.Event{Lab: "demo"})
		return insert(tx, "told", nil)
	}); err != nil {
		t.Fatal(err)
	}
	if n := countJobs(t, s); n != 1 {
		t.Errorf("%d rows, want 1", n)
	}
}
