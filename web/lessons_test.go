package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"idemlab/sim"
)

// The article's lessons (SPEC.md, "Lessons"), played through the lab's own
// simulated client and network against the real server and ledger. Nothing
// here tells the server which lesson runs: the counts emerge from the SQL.

func outcomes(op sim.Operation) []sim.Outcome {
	var out []sim.Outcome
	for _, a := range op.Attempts {
		out = append(out, a.Outcome)
	}
	return out
}

func wantLedger(t *testing.T, s *testServer, prefix string, count, total int64) {
	t.Helper()
	if l := s.ledger(prefix); l.Count != count || l.Total != total {
		t.Errorf("ledger: %d charges, %d ₽; want %d charges, %d ₽", l.Count, l.Total, count, total)
	}
}

// Lesson 1: no protection, no key; the answer is lost, the client retries:
// "Всего списаний: 2, на сумму 3000 ₽".
func TestLesson1DoubleCharge(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"protection":"none","key_strategy":"none"}`)
	op := s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"response-lost"}`)
	a := op.Attempts[0]
	if a.Status != 0 || a.Error == nil || a.Outcome != sim.OutcomeCharged {
		t.Errorf("first attempt: status %d, error %v, outcome %s; want 0, an error, charged (the server did the work, the answer was lost)", a.Status, a.Error, a.Outcome)
	}
	op = s.retry(lab, op.ID, "")
	if a := op.Attempts[1]; a.Status != http.StatusCreated || a.Outcome != sim.OutcomeCharged || a.Key != nil {
		t.Errorf("retry: status %d, outcome %s, key %v; want 201, charged, no key", a.Status, a.Outcome, a.Key)
	}
	wantLedger(t, s, lab, 2, 3000)
}

// Lesson 2: UNIQUE on the key, the client reuses its UUID: "Всего списаний: 1,
// на сумму 1500 ₽"; the retry is reported as already done.
func TestLesson2UniqueKey(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"protection":"unique","key_strategy":"uuid"}`)
	op := s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"response-lost"}`)
	op = s.retry(lab, op.ID, "")
	first, retry := op.Attempts[0], op.Attempts[1]
	if first.Key == nil || retry.Key == nil || *first.Key != *retry.Key {
		t.Errorf("keys %v and %v: the retry must reuse the operation's key", first.Key, retry.Key)
	}
	if retry.Status != http.StatusOK || retry.Outcome != sim.OutcomeDuplicate {
		t.Errorf("retry: status %d, outcome %s; want 200 duplicate", retry.Status, retry.Outcome)
	}
	wantLedger(t, s, lab, 1, 1500)
}

// Lesson 3: SELECT-then-INSERT lets two concurrent retries both pass the
// check; UNIQUE, ON CONFLICT and replay let exactly one through. The first
// attempt is lost on the way, so both racers find no payment yet.
func TestLesson3Race(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, tc := range []struct {
		protection string
		want       int64
	}{
		{"check-then-insert", 2},
		{"unique", 1},
		{"on-conflict", 1},
		{"replay", 1},
	} {
		t.Run(tc.protection, func(t *testing.T) {
			for trial := range 3 { // the race is reliable, not lucky
				lab := s.newLab(fmt.Sprintf(`{"protection":%q,"key_strategy":"uuid","check_gap_ms":500,"client_timeout_ms":10000}`, tc.protection))
				op := s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"request-lost"}`)
				r := s.must(http.StatusOK, "POST", lab+"/operations/"+op.ID+"/race", `{"parallel":2}`)
				op = decode[sim.Operation](t, r.Body)
				if len(op.Attempts) != 3 {
					t.Fatalf("trial %d: %d attempts, want 1 + 2 racers", trial, len(op.Attempts))
				}
				if l := s.ledger(lab); l.Count != tc.want {
					t.Errorf("trial %d: %d charges, want %d; outcomes %v", trial, l.Count, tc.want, outcomes(op))
				}
			}
		})
	}
}

// Lesson 4: a new UUID for every HTTP request protects nothing: every
// delivered attempt charges, whatever the server's protection.
func TestLesson4KeyPerRequest(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, protection := range []string{"unique", "on-conflict", "replay"} {
		t.Run(protection, func(t *testing.T) {
			lab := s.newLab(fmt.Sprintf(`{"protection":%q,"key_strategy":"uuid-per-request","network":"response-lost"}`, protection))
			op := s.operation(lab, `{"order_id":"order-42","amount":1500}`)
			op = s.retry(lab, op.ID, "")
			op = s.retry(lab, op.ID, "")
			keys := map[string]bool{}
			for _, a := range op.Attempts {
				if a.Key == nil {
					t.Fatalf("attempt %d sent no key", a.N)
				}
				keys[*a.Key] = true
			}
			if len(keys) != 3 {
				t.Errorf("%d distinct keys in 3 attempts, want 3", len(keys))
			}
			wantLedger(t, s, lab, 3, 4500)
		})
	}
}

// Lesson 5: a second, legitimate purchase of the same goods. A natural key
// or a content hash folds it into the first and refuses it; a UUID per
// operation lets it through.
func TestLesson5SecondPurchase(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, tc := range []struct {
		strategy string
		want     int64
		second   sim.Outcome
	}{
		{"natural", 1, sim.OutcomeDuplicate},
		{"hash", 1, sim.OutcomeDuplicate},
		{"uuid", 2, sim.OutcomeCharged},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			lab := s.newLab(fmt.Sprintf(`{"protection":"unique","key_strategy":%q}`, tc.strategy))
			s.operation(lab, `{"order_id":"order-42","amount":1500}`)
			op := s.operation(lab, `{"order_id":"order-42","amount":1500}`)
			if got := op.Attempts[0].Outcome; got != tc.second {
				t.Errorf("second purchase: %s, want %s", got, tc.second)
			}
			wantLedger(t, s, lab, tc.want, tc.want*1500)
		})
	}
}

// Lesson 6: after a lost answer, UNIQUE answers "duplicate" — not the first
// answer — while replay answers the very first body again, marked
// Idempotent-Replayed.
func TestLesson6UniqueVersusReplay(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, tc := range []struct {
		protection string
		status     int
		outcome    sim.Outcome
	}{
		{"unique", http.StatusOK, sim.OutcomeDuplicate},
		{"replay", http.StatusCreated, sim.OutcomeReplayed},
	} {
		t.Run(tc.protection, func(t *testing.T) {
			lab := s.newLab(fmt.Sprintf(`{"protection":%q,"key_strategy":"uuid"}`, tc.protection))
			op := s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"response-lost"}`)
			op = s.retry(lab, op.ID, "")
			if a := op.Attempts[1]; a.Status != tc.status || a.Outcome != tc.outcome {
				t.Errorf("retry: %d %s, want %d %s", a.Status, a.Outcome, tc.status, tc.outcome)
			}
			l := s.ledger(lab)
			if l.Count != 1 {
				t.Fatalf("%d charges, want 1", l.Count)
			}
			// What would the retry have read? Ask the endpoint as curl would.
			r := s.do("POST", lab+"/charges", `{"order_id":"order-42","amount":1500}`, "Idempotency-Key", *op.Key)
			if tc.protection == "replay" {
				first := s.must(http.StatusOK, "GET", lab+fmt.Sprintf("/payments/%d", l.Payments[0].ID), "")
				if string(r.Body) != string(first.Body) || r.Header.Get("Idempotent-Replayed") != "true" {
					t.Errorf("replayed answer %s (Idempotent-Replayed %q), want the first payment %s", r.Body, r.Header.Get("Idempotent-Replayed"), first.Body)
				}
			} else if got := r.JSON(t)["status"]; got != "duplicate" || r.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("unique answers %s, want {\"status\":\"duplicate\"} without Idempotent-Replayed", r.Body)
			}
		})
	}
}

// Lesson 13: the race of lesson 3 in one transaction on PostgreSQL. Under
// READ COMMITTED both racers find nothing and both charge; under
// SERIALIZABLE the database fails the second with 40001, answered 409 with
// Retry-After, and its retry is a duplicate. Ten trials of each, every one
// as the article says.
func TestLesson13Isolation(t *testing.T) {
	t.Parallel()
	s := startServer(t, withPostgres(t))
	for trial := range 10 {
		lab := s.newLab(`{"protection":"check-then-insert","key_strategy":"uuid","check_gap_ms":500,"client_timeout_ms":10000,"isolation":"read-committed"}`)
		op := s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"request-lost"}`)
		op = decode[sim.Operation](t, s.must(http.StatusOK, "POST", lab+"/operations/"+op.ID+"/race", `{"parallel":2}`).Body)
		if l := s.ledger(lab); l.Count != 2 {
			t.Errorf("trial %d, read-committed: %d charges, want 2; outcomes %v", trial, l.Count, outcomes(op))
		}

		s.must(http.StatusOK, "PATCH", lab+"/settings", `{"isolation":"serializable"}`)
		op = s.operation(lab, `{"order_id":"order-43","amount":1500,"fate":"request-lost"}`)
		op = decode[sim.Operation](t, s.must(http.StatusOK, "POST", lab+"/operations/"+op.ID+"/race", `{"parallel":2}`).Body)
		var charged, conflicts int
		for _, a := range op.Attempts[1:] {
			switch {
			case a.Status == http.StatusCreated && a.Outcome == sim.OutcomeCharged:
				charged++
			case a.Status == http.StatusConflict && a.Outcome == sim.OutcomeConflict:
				conflicts++
			}
		}
		if charged != 1 || conflicts != 1 {
			t.Errorf("trial %d, serializable: racers %v; want one charged (201), one conflict (409)", trial, outcomes(op))
		}
		op = s.retry(lab, op.ID, `{"fate":"ok"}`)
		if last := op.Attempts[len(op.Attempts)-1]; last.Status != http.StatusOK || last.Outcome != sim.OutcomeDuplicate {
			t.Errorf("trial %d: the loser's retry got %d %s, want 200 duplicate", trial, last.Status, last.Outcome)
		}
		if l := s.ledger(lab); l.Count != 3 || l.Total != 4500 {
			t.Errorf("trial %d: %d charges, %d ₽; want 3, 4500", trial, l.Count, l.Total)
		}
	}
	// The 409 itself, straight: the problem type, and when to come back.
	lab := s.newLab(`{"protection":"check-then-insert","check_gap_ms":500,"client_timeout_ms":10000,"isolation":"serializable"}`)
	statuses := storm(t, s, lab, 2, "direct-race")
	if statuses[http.StatusCreated] != 1 || statuses[http.StatusConflict] != 1 {
		t.Errorf("two direct racers: statuses %v, want one 201 and one 409", statuses)
	}
	r := s.do("POST", lab+"/charges", `{"order_id":"order-42","amount":1500}`, "Idempotency-Key", "direct-race")
	if r.Status != http.StatusOK {
		t.Errorf("the retry after the race: %d, want 200 duplicate", r.Status)
	}
}

// On SQLite there is no isolation to choose: serializable is refused with
// a 400 naming the setting, and lesson 13 cannot be set up.
func TestIsolationNeedsPostgres(t *testing.T) {
	t.Parallel()
	s := startServer(t, withDB(":memory:"))
	lab := s.newLab("")
	r := s.do("PATCH", lab+"/settings", `{"isolation":"serializable"}`)
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `"field":"isolation"`) || !strings.Contains(string(r.Body), "PostgreSQL") {
		t.Errorf("serializable on SQLite: %d %s; want 400 naming isolation and PostgreSQL", r.Status, r.Body)
	}
	s.must(http.StatusOK, "PATCH", lab+"/settings", `{"isolation":"read-committed"}`)
	s.must(http.StatusOK, "POST", lab+"/lesson", `{"lesson":13}`)
	if r := s.do("POST", lab+"/lesson/setup", ""); r.Status != http.StatusBadRequest {
		t.Errorf("set up lesson 13 on SQLite: %d %s; want 400", r.Status, r.Body)
	}
	page := string(s.must(http.StatusOK, "GET", "/labs/"+strings.TrimPrefix(lab, "/api/v1/labs/")+"?lang=en", "").Body)
	if !strings.Contains(page, `data-postgres="yes"`) || !strings.Contains(page, "This lesson needs the lab on PostgreSQL") || strings.Contains(page, `name="isolation"`) {
		t.Error("the SQLite page of lesson 13 does not say that it needs PostgreSQL, or offers the isolation setting")
	}
}
