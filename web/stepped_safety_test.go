package web_test

import (
	"context"
	"net/http"
	"path"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/clock"
)

// raceKey is the key the race's racers send.
func (st *stepper) key() string {
	st.s.tb.Helper()
	op := decode[sim.Operation](st.s.tb, st.s.must(http.StatusOK, "GET", st.prefix+"/operations/"+st.race.Operation, "").Body)
	if len(op.Attempts) == 0 || op.Attempts[0].Key == nil {
		st.s.tb.Fatalf("the race's operation has no keyed attempt: %+v", op)
	}
	return *op.Attempts[0].Key
}

// TestSteppedAbortLeavesKeyFree aborts a race whose racer A has run its
// first statement, under each protection that keys, on the test's store:
// nothing half written stays, and the key is as free as before (a charge
// with it charges; no claim or SET NX blocks it).
func TestSteppedAbortLeavesKeyFree(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	pg := s.Store.Postgres()
	for _, p := range []sim.Protection{sim.ProtectCheckThenInsert, sim.ProtectUnique, sim.ProtectOnConflict, sim.ProtectReplay, sim.ProtectSetNX} {
		t.Run(string(p), func(t *testing.T) {
			prefix := s.newLab(`{"protection": "` + string(p) + `", "key_strategy": "uuid"}`)
			st := s.stepped(prefix, "order-42", 2).step("A")
			// On SQLite an INSERT is its own COMMIT: a payment made whole.
			whole := !pg && (p == sim.ProtectUnique || p == sim.ProtectOnConflict)
			st.read(s.must(http.StatusOK, "DELETE", prefix+"/stepped-races/"+st.race.ID, ""))
			if !st.race.Over || st.race.Aborted != sim.AbortAsked {
				t.Fatalf("after DELETE: over %v, aborted %q\n%+v", st.race.Over, st.race.Aborted, st.race)
			}
			for _, r := range st.race.Racers {
				want := sim.OutcomeConflict // told to retry
				if whole && r.Name == "A" {
					want = sim.OutcomeCharged
				}
				if r.State != sim.RacerDone || r.Outcome != want {
					t.Errorf("racer %s: %s, answered %s; want done, %s", r.Name, r.State, r.Outcome, want)
				}
			}
			want := map[bool]int64{false: 0, true: 1}[whole]
			if got := s.ledger(prefix).Count; got != want {
				t.Fatalf("%d payments after the abort, want %d\n%+v", got, want, st.race.Log)
			}
			r := s.do("POST", prefix+"/charges", `{"order_id": "order-42", "amount": 1500}`, "Idempotency-Key", st.key())
			if wantStatus := map[bool]int{false: http.StatusCreated, true: http.StatusOK}[whole]; r.Status != wantStatus {
				t.Fatalf("a charge with the key after the abort: %d, want %d\n%s", r.Status, wantStatus, r.Body)
			}
		})
	}
}

// TestSteppedHangUp: a racer's client that gives up waiting does not stop
// the server, which holds the request (the network delivered it): the racer
// still stands at its point, and stepped on it finishes whole. Under replay
// its key then gives the answer the client lost.
func TestSteppedHangUp(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := s.newLab(`{"protection": "replay", "key_strategy": "uuid"}`)
	st := s.stepped(prefix, "order-42", 2).step("A")
	l, err := s.House.Labs.Lab(context.Background(), path.Base(prefix))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.House.Stepped.HangUp(l, st.race.ID, "A"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "A's client gave up", func() bool {
		race, err := s.House.Stepped.Get(l, st.race.ID)
		return err == nil && race.Racers[0].GaveUp
	})
	if a := st.step("B").racer("A"); a.State != sim.RacerReady || a.Next != sim.PointCharge {
		t.Fatalf("A after its client gave up: %s before %s; want it still ready before its charge", a.State, a.Next)
	}
	if got := st.results("B", sim.PointClaim); len(got) != 1 || got[0] != sim.StepInFlight {
		t.Fatalf("B's claim: %v, want in flight (A holds the key)\n%+v", got, st.race.Log)
	}
	st.step("A*")
	if a := st.racer("A"); a.State != sim.RacerDone || a.Outcome != sim.OutcomeCharged || a.Status != 0 {
		t.Fatalf("A: %s, %s, status %d; want done, charged, no answer at its client", a.State, a.Outcome, a.Status)
	}
	r := s.must(http.StatusCreated, "POST", prefix+"/charges", `{"order_id": "order-42", "amount": 1500}`, "Idempotency-Key", st.key())
	if r.Header.Get("Idempotent-Replayed") != "true" || s.ledger(prefix).Count != 1 {
		t.Fatalf("the key's retry: replayed %q, %d payments; want A's answer again, one payment", r.Header.Get("Idempotent-Replayed"), s.ledger(prefix).Count)
	}
}

// TestSteppedIdle: a race nobody touches for two minutes is aborted, and
// its racers' transactions roll back.
func TestSteppedIdle(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Now())
	s := startServer(t, withClock(fake))
	prefix := s.newLab(`{"protection": "replay", "key_strategy": "uuid"}`)
	st := s.stepped(prefix, "order-42", 2).step("A")
	fake.Advance(sim.SteppedIdle - time.Second)
	if got := s.must(http.StatusOK, "GET", prefix+"/stepped-races/"+st.race.ID, ""); decode[sim.SteppedRace](t, got.Body).Over {
		t.Fatal("the race ended before it was idle for two minutes")
	}
	fake.Advance(2 * time.Second)
	var race sim.SteppedRace
	waitFor(t, 5*time.Second, "the idle race aborted", func() bool {
		race = decode[sim.SteppedRace](t, s.must(http.StatusOK, "GET", prefix+"/stepped-races/"+st.race.ID, "").Body)
		return race.Over
	})
	if race.Aborted != sim.AbortIdle {
		t.Fatalf("aborted %q, want idle", race.Aborted)
	}
	r := s.do("POST", prefix+"/charges", `{"order_id": "order-42", "amount": 1500}`, "Idempotency-Key", st.key())
	if r.Status != http.StatusCreated {
		t.Fatalf("a charge with the key after the idle abort: %d, want 201\n%s", r.Status, r.Body)
	}
}

// TestSteppedReset: a reset while a racer holds its transaction open (on
// PostgreSQL, the lab's lock) aborts the race first, instead of waiting
// for it, and the lab starts again empty, ready for another race.
func TestSteppedReset(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := s.newLab(`{"protection": "unique", "key_strategy": "uuid"}`)
	st := s.stepped(prefix, "order-42", 2).step("A")
	s.must(http.StatusNoContent, "POST", prefix+"/reset", "")
	s.must(http.StatusNotFound, "GET", prefix+"/stepped-races/"+st.race.ID, "")
	if got := s.ledger(prefix).Count; got != 0 {
		t.Fatalf("%d payments after the reset", got)
	}
	s.stepped(prefix, "order-42", 2).step("A*", "B*")
	if got := s.ledger(prefix).Count; got != 1 {
		t.Fatalf("the race after the reset charged %d times, want 1", got)
	}
}
