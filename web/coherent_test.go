package web_test

import (
	"context"
	"net/http"
	"path"
	"testing"
	"time"

	"idemlab/sim"
)

const coherentBody = `{"order_id":"order-42","amount":1500}`

// cached has B charge key and replay it once: B keeps the answer in
// memory from then on.
func cached(t *testing.T, b *testServer, lab, key string) response {
	t.Helper()
	first := b.must(http.StatusCreated, "POST", lab+"/charges", coherentBody, "Idempotency-Key", key)
	if r := b.do("POST", lab+"/charges", coherentBody, "Idempotency-Key", key); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("B's second request with %s: %d, not a replay", key, r.Status)
	}
	return first
}

// wantNew checks that B answers key with a new charge, not a replay of
// an answer the lab no longer has.
func wantNew(t *testing.T, b *testServer, lab, key, after string) {
	t.Helper()
	if r := b.do("POST", lab+"/charges", coherentBody, "Idempotency-Key", key); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") == "true" {
		t.Errorf("after %s, B answered %s with %d (replayed %q): an answer from before the reset; want a new charge", after, key, r.Status, r.Header.Get("Idempotent-Replayed"))
	}
}

// cutListeners ends the connections the processes on s's database listen
// on, and waits until each is gone: what is told meanwhile, they miss.
func cutListeners(t *testing.T, s *testServer) {
	t.Helper()
	var (
		n   int
		all bool
	)
	err := s.Store.Pool().QueryRow(context.Background(), `
SELECT count(*), COALESCE(bool_and(pg_terminate_backend(pid, 5000)), false) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'idemlab listener'`).Scan(&n, &all)
	if err != nil || n == 0 || !all {
		t.Fatalf("cut the listeners: %d of them, all gone %v, %v", n, all, err)
	}
}

// A reset through A is never followed by a replay through B of an answer
// from before it: not while B's notice of the reset is on its way, not
// with B's listening connection cut. (B stalled while it hears: the
// cluster's TestSpreadWaitsForEveryProcess.)
func TestNoReplayFromBeforeAReset(t *testing.T) {
	t.Parallel()
	a, b := twoProcesses(t)
	lab := a.newLab(`{"protection":"replay"}`)
	t.Run("heard a moment later", func(t *testing.T) {
		for range 10 {
			cached(t, b, lab, "k-soon")
			a.must(http.StatusNoContent, "POST", lab+"/reset", "")
			wantNew(t, b, lab, "k-soon", "a reset through A")
		}
	})
	t.Run("listener cut", func(t *testing.T) {
		cached(t, b, lab, "k-cut")
		cutListeners(t, b)
		a.must(http.StatusNoContent, "POST", lab+"/reset", "")
		wantNew(t, b, lab, "k-cut", "a reset through A with B's listener cut")
	})
	if l := a.ledger(lab); l.Count != 1 {
		t.Errorf("after the last reset and one charge: %d charges, want 1", l.Count)
	}
}

// unheard changes the answer stored for key behind every process's back:
// a change no process hears of, and the lab's generation does not show.
// B answers from what it keeps until it drops it.
func unheard(t *testing.T, b *testServer, lab, key string) string {
	t.Helper()
	body := `{"changed":"behind the processes' backs"}`
	res, err := b.Store.Pool().Exec(context.Background(), `UPDATE idempotency_records SET body = $1 WHERE lab_id = $2 AND key = $3`,
		[]byte(body), path.Base(lab), key)
	if err != nil || res.RowsAffected() != 1 {
		t.Fatalf("change the record of %s: %v, %d rows", key, err, res.RowsAffected())
	}
	if r := b.do("POST", lab+"/charges", coherentBody, "Idempotency-Key", key); string(r.Body) == body {
		t.Fatalf("B answered %s with the stored answer changed unheard: it does not keep answers at all", key)
	}
	return body
}

// servesStored polls until B replays key with what the database stores.
func servesStored(t *testing.T, b *testServer, lab, key, stored, after string) {
	t.Helper()
	start := time.Now()
	if !poll(10*time.Second, func() bool {
		r := b.do("POST", lab+"/charges", coherentBody, "Idempotency-Key", key)
		return string(r.Body) == stored
	}) {
		t.Fatalf("after %s, B still answers %s from what it kept before", after, key)
	}
	t.Logf("after %s, B read %s afresh in %s", after, key, time.Since(start).Round(time.Millisecond))
}

// A process whose listening connection broke drops what it kept: once it
// listens again, nothing it serves comes from before.
func TestReconnectDropsWhatWasKept(t *testing.T) {
	t.Parallel()
	a, b := twoProcesses(t)
	lab := a.newLab(`{"protection":"replay"}`)
	cached(t, b, lab, "k1")
	stored := unheard(t, b, lab, "k1")
	cutListeners(t, b)
	servesStored(t, b, lab, "k1", stored, "its listener was cut")
}

// A notice a process cannot read is a notice missed: it starts over.
func TestUnreadableNoticeStartsOver(t *testing.T) {
	t.Parallel()
	a, b := twoProcesses(t)
	lab := a.newLab(`{"protection":"replay"}`)
	cached(t, b, lab, "k1")
	stored := unheard(t, b, lab, "k1")
	if _, err := a.Store.Pool().Exec(context.Background(), `SELECT pg_notify('idemlab', 'not a notice')`); err != nil {
		t.Fatal(err)
	}
	servesStored(t, b, lab, "k1", stored, "a notice it could not read")
}

// A clock moved through A is B's the next moment: its notice goes out in
// the move's transaction.
func TestClockAcrossProcesses(t *testing.T) {
	t.Parallel()
	a, b := twoProcesses(t)
	lab := a.newLab("")
	b.must(http.StatusOK, "GET", lab+"/keys", "") // B keeps the lab in memory
	a.must(http.StatusOK, "POST", lab+"/clock", `{"advance_s":3600}`)
	waitFor(t, 5*time.Second, "B to see the lab's clock an hour ahead", func() bool {
		now, err := time.Parse(time.RFC3339, b.must(http.StatusOK, "GET", lab+"/keys", "").JSON(t)["now"].(string))
		return err == nil && time.Until(now) > 55*time.Minute
	})
}

// A process that lost events on their way out (more than its buffer
// holds) has the others start over: they drop what they kept, and read
// it afresh.
func TestLostEventsMakeTheOthersStartOver(t *testing.T) {
	t.Parallel()
	a, b := twoProcesses(t)
	lab := a.newLab(`{"protection":"replay"}`)
	cached(t, b, lab, "k1")
	stored := unheard(t, b, lab, "k1")
	sub := b.House.Bus.Subscribe(1 << 20)
	t.Cleanup(sub.Close)
	heard := make(chan struct{})
	go func() {
		for ev := range sub.Events() {
			if ev.Kind == sim.EventStartOver && ev.Remote {
				close(heard)
				return
			}
		}
	}()
	flooded := func() bool {
		for range 5000 { // far more than A's way out holds
			a.House.Bus.Publish(sim.Event{Lab: path.Base(lab), Kind: sim.EventAttempt})
		}
		select {
		case <-heard:
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	}
	for i := 0; !flooded(); i++ {
		if i == 50 {
			t.Fatal("B was never told to start over")
		}
	}
	if r := b.do("POST", lab+"/charges", coherentBody, "Idempotency-Key", "k1"); string(r.Body) != stored {
		t.Errorf("B, told to start over, answered k1 with %s: what it kept before; want %s", r.Body, stored)
	}
}
