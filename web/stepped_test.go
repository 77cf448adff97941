package web_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"idemlab/sim"
)

// stepper drives a lab's stepped race through the API.
type stepper struct {
	s      *testServer
	prefix string
	race   sim.SteppedRace
}

func (s *testServer) stepped(prefix, order string, racers int) *stepper {
	s.tb.Helper()
	r := s.must(http.StatusCreated, "POST", prefix+"/stepped-races",
		`{"racers": `+itoa(racers)+`, "order_id": "`+order+`", "amount": 1500}`)
	st := &stepper{s: s, prefix: prefix}
	st.read(r)
	return st
}

func (st *stepper) read(r response) {
	st.s.tb.Helper()
	st.race = sim.SteppedRace{}
	if err := json.Unmarshal(r.Body, &st.race); err != nil {
		st.s.tb.Fatalf("stepped race: %v\n%s", err, r.Body)
	}
}

// step takes racer's steps: "A" one point, "A*" to its end.
func (st *stepper) step(steps ...string) *stepper {
	st.s.tb.Helper()
	for _, name := range steps {
		to := ""
		if strings.HasSuffix(name, "*") {
			name, to = strings.TrimSuffix(name, "*"), "end"
		}
		st.read(st.s.must(http.StatusOK, "POST", st.prefix+"/stepped-races/"+st.race.ID+"/step",
			`{"racer": "`+name+`", "to": "`+to+`"}`))
	}
	return st
}

func (st *stepper) racer(name string) sim.Racer {
	for _, r := range st.race.Racers {
		if r.Name == name {
			return r
		}
	}
	st.s.tb.Fatalf("no racer %s in %+v", name, st.race)
	return sim.Racer{}
}

// results are the results of racer's statements at point, in order.
func (st *stepper) results(racer string, p sim.Point) []string {
	var out []string
	for _, l := range st.race.Log {
		if l.Racer == racer && l.Point == p {
			out = append(out, l.Code)
		}
	}
	return out
}

// TestSteppedRaceCases plays SPEC's three cases of the race under a
// microscope through the API, on the store the test runs on: the
// interleaving a person chooses decides the outcome, every time.
func TestSteppedRaceCases(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			var opts []func(*serverOpts)
			if db == "postgres" {
				opts = append(opts, withPostgres(t))
			}
			s := startServer(t, opts...)
			for trial := range 10 {
				steppedCases(t, s, trial)
			}
		})
	}
}

func steppedCases(t *testing.T, s *testServer, trial int) {
	t.Helper()
	// 14: A SELECT, B SELECT, A INSERT+COMMIT, B INSERT+COMMIT.
	p := s.newLab(`{"protection": "check-then-insert", "key_strategy": "uuid"}`)
	st := s.stepped(p, "order-42", 2).step("A", "B", "A*", "B*")
	if got := s.ledger(p).Count; got != 2 {
		t.Fatalf("trial %d, 14: %d payments, want 2\n%+v", trial, got, st.race)
	}
	for _, r := range []string{"A", "B"} {
		if got := st.results(r, sim.PointSelect); len(got) != 1 || got[0] != sim.StepFound || st.rows(r) != 0 {
			t.Fatalf("trial %d, 14: %s's SELECT: %v (%d rows), want found 0\n%+v", trial, r, got, st.rows(r), st.race.Log)
		}
	}
	if !st.race.Over {
		t.Fatalf("trial %d, 14: race not over: %+v", trial, st.race)
	}
	// 14b: the same interleaving under unique.
	p = s.newLab(`{"protection": "unique", "key_strategy": "uuid"}`)
	st = s.stepped(p, "order-42", 2).step("A", "B", "A*", "B*")
	if got := s.ledger(p).Count; got != 1 {
		t.Fatalf("trial %d, 14b: %d payments, want 1\n%+v", trial, got, st.race)
	}
	if got := st.results("B", sim.PointInsert); len(got) == 0 || got[len(got)-1] != sim.StepUnique {
		t.Fatalf("trial %d, 14b: B's INSERT: %v, want a unique violation\n%+v", trial, got, st.race.Log)
	}
	if b := st.racer("B"); b.Status != http.StatusOK || b.Outcome != sim.OutcomeDuplicate {
		t.Fatalf("trial %d, 14b: B answered %d %s, want 200 duplicate", trial, b.Status, b.Outcome)
	}
	// 14c: A runs to its end before B starts.
	p = s.newLab(`{"protection": "check-then-insert", "key_strategy": "uuid"}`)
	st = s.stepped(p, "order-42", 2).step("A*", "B*")
	if got := s.ledger(p).Count; got != 1 {
		t.Fatalf("trial %d, 14c: %d payments, want 1\n%+v", trial, got, st.race)
	}
	if got := st.results("B", sim.PointSelect); len(got) != 1 || got[0] != sim.StepFound || st.rows("B") != 1 {
		t.Fatalf("trial %d, 14c: B's SELECT: %v, want found 1\n%+v", trial, got, st.race.Log)
	}
}

// rows is what racer's SELECT found.
func (st *stepper) rows(racer string) int64 {
	for _, l := range st.race.Log {
		if l.Racer == racer && l.Point == sim.PointSelect {
			return l.RowsFound()
		}
	}
	return -1
}

// TestSteppedEachProtection plays the article's interleaving with three
// racers (each one step, then each to its end) under every protection, on
// the test's store: the ones that promise one payment keep it, stepped or
// not; the others charge each racer.
func TestSteppedEachProtection(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	for _, c := range []struct {
		p    sim.Protection
		want int64
	}{{sim.ProtectNone, 3}, {sim.ProtectCheckThenInsert, 3}, {sim.ProtectUnique, 1}, {sim.ProtectOnConflict, 1}, {sim.ProtectReplay, 1}, {sim.ProtectSetNX, 1}} {
		prefix := s.newLab(`{"protection": "` + string(c.p) + `", "key_strategy": "uuid"}`)
		st := s.stepped(prefix, "order-42", 3).step("A", "B", "C", "A*", "B*", "C*")
		if got := s.ledger(prefix).Count; got != c.want || !st.race.Over {
			t.Errorf("%s: %d payments (over %v), want %d\n%+v", c.p, got, st.race.Over, c.want, st.race.Log)
		}
		for _, r := range st.race.Racers { // the points it lists are those it stops at
			for _, l := range st.race.Log {
				if l.Racer == r.Name && !slices.Contains(r.Points, l.Point) {
					t.Errorf("%s: racer %s ran %s, not among its points %v", c.p, r.Name, l.Point, r.Points)
				}
			}
		}
	}
}

// TestSteppedSerializable: under SERIALIZABLE on PostgreSQL the article's
// interleaving fails B with 40001 at the statement where PostgreSQL
// raises it, and one payment stays.
func TestSteppedSerializable(t *testing.T) {
	t.Parallel()
	s := startServer(t, withPostgres(t))
	for trial := range 10 {
		prefix := s.newLab(`{"protection": "check-then-insert", "key_strategy": "uuid", "isolation": "serializable"}`)
		st := s.stepped(prefix, "order-42", 2).step("A", "B", "A*", "B")
		failed := append(st.results("B", sim.PointInsert), st.step("B*").results("B", sim.PointCommit)...)
		if !slices.Contains(failed, sim.StepSerialize) {
			t.Fatalf("trial %d: B's INSERT and COMMIT: %v, want 40001 at one of them\n%+v", trial, failed, st.race.Log)
		}
		if b := st.racer("B"); b.Outcome != sim.OutcomeConflict || b.Status != http.StatusConflict {
			t.Fatalf("trial %d: B answered %d %s, want 409 conflict", trial, b.Status, b.Outcome)
		}
		if got := s.ledger(prefix).Count; got != 1 {
			t.Fatalf("trial %d: %d payments, want 1", trial, got)
		}
	}
}
