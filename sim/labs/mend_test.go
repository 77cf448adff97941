package labs_test

import (
	"context"
	"testing"
	"time"

	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/labs"
	"idemlab/sim/pgtest"
	"idemlab/sim/store"
)

// mendLease is the lease of the processes of TestOnlyTheDeadsWorkIsMended:
// long enough that a renewal slowed by a busy machine (CI runs the other
// packages beside it) does not give a live process up for dead.
const mendLease = time.Second

// process is a process of the lab on a database: its store, with the
// lease's options, and its registry, started.
func process(t *testing.T, dsn string, o store.Options) (*store.Store, world) {
	t.Helper()
	ctx := context.Background()
	o.Lease = mendLease
	db, err := store.OpenWith(ctx, dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	fake := clock.NewFake(start)
	r, err := labs.New(ctx, labs.Config{Store: db, Clock: db.Clock(fake), Bus: events.New(fake.Now)})
	if err != nil {
		t.Fatal(err)
	}
	w := world{r: r, clock: fake, room: &recorder{}}
	if err := r.Start(ctx, w.room); err != nil {
		t.Fatal(err)
	}
	return db, w
}

// A process that starts beside a live one mends none of its work, and nor
// do its renewals; once that process dies (it renews no more), a live
// process mends its work within two leases: the attempt it was making
// ends unknown, the lab's own API's claim it held is given back, the email
// it was sending may be sent again. A charge's claim stays in flight until
// its lock times out, as after a crash.
func TestOnlyTheDeadsWorkIsMended(t *testing.T) {
	t.Parallel()
	dsn := pgtest.Database(t)
	ctx := context.Background()
	renewals := clock.NewFake(start) // b renews when the test says
	b, bw := process(t, dsn, store.Options{Clock: renewals})
	l := bw.create(t, labs.KindPrivate)
	if _, err := b.Exec(ctx, `INSERT INTO operations (lab_id, id, seq, order_id, amount, key_strategy, created_at) VALUES (?, 'op-1', 1, 'order-1', 100, 'uuid', 0)`, l.ID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{ // b's work under way, as its rooms write it
		`INSERT INTO attempts (lab_id, op_id, n, fate, outcome, started_at, process) VALUES (?1, 'op-1', 1, 'ok', 'pending', 0, ?2)`,
		`INSERT INTO idempotency_records (lab_id, scope, key, fingerprint, state, token, locked_until, expires_at, created_at, process)
VALUES (?1, 'operations', 'api-key', 'f', 'in-flight', 't', 9000000000000, 9000000000000, 0, ?2)`,
		`INSERT INTO idempotency_records (lab_id, scope, key, fingerprint, state, token, locked_until, expires_at, created_at, process)
VALUES (?1, 'charges', 'charge-key', 'f', 'in-flight', 't', 9000000000000, 9000000000000, 0, ?2)`,
		`INSERT INTO email_outbox (lab_id, id, order_id, amount, payment_n, claimed_at, created_at, process) VALUES (?1, 'mail-1', 'order-1', 100, 1, 5, 0, ?2)`,
	} {
		if _, err := b.Exec(ctx, q, l.ID, b.Process()); err != nil {
			t.Fatal(err)
		}
	}
	work := func() (attempt string, apiClaim, chargeClaim, emailClaimed bool) {
		t.Helper()
		var n, m, c int
		err := b.QueryRow(ctx, `SELECT (SELECT outcome FROM attempts WHERE lab_id = ?1),
    (SELECT COUNT(*) FROM idempotency_records WHERE lab_id = ?1 AND key = 'api-key'),
    (SELECT COUNT(*) FROM idempotency_records WHERE lab_id = ?1 AND key = 'charge-key'),
    (SELECT claimed_at FROM email_outbox WHERE lab_id = ?1)`, l.ID).Scan(&attempt, &n, &m, &c)
		if err != nil {
			t.Fatal(err)
		}
		return attempt, n == 1, m == 1, c > 0
	}

	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { // b lives: it renews every third of its lease
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(mendLease / 4):
				renewals.Advance(mendLease / 3)
			}
		}
	}()
	aRenewals := clock.NewFake(start)
	a, _ := process(t, dsn, store.Options{Clock: aRenewals}) // a starts beside b
	for range 3 {                                            // and renews its lease a few times
		renew(t, a, aRenewals)
	}
	if a, api, ch, em := work(); a != "pending" || !api || !ch || !em {
		t.Errorf("b's work beside a: attempt %s, API claim %v, charge claim %v, email claimed %v; want all as b left them", a, api, ch, em)
	}

	close(stop) // b dies
	<-stopped
	died := time.Now()
	var (
		attempt           string
		api, charge, sent bool
	)
	if !waitUntil(2*mendLease+mendLease+time.Second, func() bool {
		aRenewals.Advance(mendLease / 3) // a lives on, and its renewals find b dead
		attempt, api, charge, sent = work()
		return attempt == "unknown" && !api && !sent
	}) {
		t.Fatalf("%s after b died: attempt %s, API claim %v, email claimed %v; want unknown, given back, released", time.Since(died), attempt, api, sent)
	}
	if !charge {
		t.Error("the charge's claim was given back before its lock timed out")
	}
	t.Logf("b's work mended %s after it died (lease %s)", time.Since(died).Round(10*time.Millisecond), mendLease)
}

// renew has s renew its lease by the clock that ticks its renewals, and
// waits until the renewal has moved its lease's end.
func renew(t *testing.T, s *store.Store, renewals *clock.Fake) {
	t.Helper()
	leaseUntil := func() (ms int64) {
		if err := s.QueryRow(context.Background(), `SELECT lease_until FROM processes WHERE id = ?`, s.Process()).Scan(&ms); err != nil {
			t.Fatal(err)
		}
		return ms
	}
	before := leaseUntil()
	renewals.Advance(mendLease / 3)
	eventually(t, 10*time.Second, "a renewal", func() bool {
		if leaseUntil() > before {
			return true
		}
		renewals.Advance(mendLease / 3) // a renewal answered late is given up: tick again
		return false
	})
}

// waitUntil polls cond until it holds or d has passed, and reports which.
func waitUntil(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// eventually fails the test unless cond holds within d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !waitUntil(d, cond) {
		t.Fatalf("not within %s: %s", d, what)
	}
}
