package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"idemlab/sim"
)

// apiKey is one key as GET …/keys lists it.
type apiKey struct {
	Key    string `json:"key"`
	Store  string `json:"store"`
	State  string `json:"state"`
	TTLMS  *int64 `json:"ttl_ms"`
	LockMS *int64 `json:"lock_ms"`
}

// keysOf reads GET …/keys.
func (s *testServer) keysOf(lab string) []apiKey {
	s.tb.Helper()
	r := s.must(http.StatusOK, "GET", lab+"/keys", "")
	return decode[struct{ Keys []apiKey }](s.tb, r.Body).Keys
}

func lastAttempt(op sim.Operation) sim.Attempt { return op.Attempts[len(op.Attempts)-1] }

// Lesson 11 through the API, 10 times: a key of 60 s, the answer lost, the
// lab's clock moved 120 s; the retry finds the key gone and charges again.
func TestSetNXLesson11KeyExpires(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	for range trials {
		lesson11(t, s)
	}
}

func lesson11(t *testing.T, s *testServer) {
	t.Helper()
	lab := s.newLab(`{"protection":"set-nx","key_strategy":"uuid","key_ttl_s":60,"network":"response-lost"}`)
	op := s.operation(lab, `{"order_id":"order-42","amount":1500}`)
	ks := s.keysOf(lab)
	if len(ks) != 1 || ks[0].Store != "redis" || ks[0].State != "set" || ks[0].TTLMS == nil || *ks[0].TTLMS <= 55_000 || *ks[0].TTLMS > 60_000 {
		t.Fatalf("keys after the charge: %+v; want one redis key, set, about 60 s left", ks)
	}
	now := s.must(http.StatusOK, "POST", lab+"/clock", `{"advance_s":120}`).JSON(t)["now"].(string)
	if at, err := time.Parse(time.RFC3339, now); err != nil || time.Until(at) < 110*time.Second {
		t.Errorf("the lab's clock says %q; want about two minutes ahead", now)
	}
	if ks := s.keysOf(lab); len(ks) != 1 || ks[0].State != "expired" {
		t.Errorf("keys after 120 s: %+v; want the key expired", ks)
	}
	op = s.retry(lab, op.ID, `{"fate":"ok"}`)
	if a := lastAttempt(op); a.Status != http.StatusCreated || a.Outcome != sim.OutcomeCharged {
		t.Errorf("the retry: %d %s; want 201 charged", a.Status, a.Outcome)
	}
	if led := s.ledger(lab); led.Count != 2 || led.Total != 3000 {
		t.Errorf("%d charges, %d ₽; want 2, 3000", led.Count, led.Total)
	}
}

// Lesson 12 through the API, 10 times: the server takes the Redis key and
// dies before the payment commits; the retry is told "duplicate" and
// nobody paid: the page names the lost charge. Under replay the claim
// waits out its lock, and the retry after it charges once.
func TestSetNXLesson12LostCharge(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	for range trials {
		lesson12(t, s)
	}
}

func lesson12(t *testing.T, s *testServer) {
	t.Helper()
	lab := s.newLab(`{"protection":"set-nx","key_strategy":"uuid","server_fault":"crash-after-guard"}`)
	op := s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"ok"}`)
	if a := lastAttempt(op); a.Status != 0 || a.Outcome != sim.OutcomeDropped {
		t.Fatalf("the crashed charge: %d %s; want no answer, dropped", a.Status, a.Outcome)
	}
	s.must(http.StatusOK, "PATCH", lab+"/settings", `{"server_fault":"none"}`)
	op = s.retry(lab, op.ID, `{"fate":"ok"}`)
	if a := lastAttempt(op); a.Status != http.StatusOK || a.Outcome != sim.OutcomeDuplicate {
		t.Errorf("the retry: %d %s; want 200 duplicate", a.Status, a.Outcome)
	}
	if led := s.ledger(lab); led.Count != 0 {
		t.Errorf("%d charges; want none: the charge was lost", led.Count)
	}
	page := s.must(http.StatusOK, "GET", "/labs/"+strings.TrimPrefix(lab, "/api/v1/labs/"), "")
	if !strings.Contains(string(page.Body), `data-testid="lost-charge-alert"`) || !strings.Contains(string(page.Body), "order-42") {
		t.Error("the page does not name the lost charge")
	}

	// Under replay: the claim stays in flight until its lock times out.
	s.must(http.StatusOK, "PATCH", lab+"/settings", `{"protection":"replay","server_fault":"crash-after-guard"}`)
	op = s.operation(lab, `{"order_id":"order-43","amount":1500,"fate":"ok"}`)
	if a := lastAttempt(op); a.Status != 0 || a.Outcome != sim.OutcomeDropped {
		t.Fatalf("the crashed charge under replay: %d %s; want dropped", a.Status, a.Outcome)
	}
	s.must(http.StatusOK, "PATCH", lab+"/settings", `{"server_fault":"none"}`)
	op = s.retry(lab, op.ID, `{"fate":"ok"}`)
	if a := lastAttempt(op); a.Status != http.StatusConflict || a.Outcome != sim.OutcomeInFlight {
		t.Errorf("the retry within the lock: %d %s; want 409 in-flight", a.Status, a.Outcome)
	}
	db := "sqlite" // where the replay records live: the lab's database
	if s.Store.Postgres() {
		db = "postgres"
	}
	var inFlight bool
	for _, k := range s.keysOf(lab) {
		inFlight = inFlight || (k.Store == db && k.State == "in-flight" && k.LockMS != nil && *k.LockMS > 0)
	}
	if !inFlight {
		t.Errorf("keys: %+v; want the replay record in flight, locked", s.keysOf(lab))
	}
	s.must(http.StatusOK, "POST", lab+"/clock", `{"advance_s":11}`)
	op = s.retry(lab, op.ID, `{"fate":"ok"}`)
	if a := lastAttempt(op); a.Status != http.StatusCreated || a.Outcome != sim.OutcomeCharged {
		t.Errorf("the retry after the lock: %d %s; want 201 charged", a.Status, a.Outcome)
	}
	if led := s.ledger(lab); led.Count != 1 || led.Payments[0].OrderID != "order-43" {
		t.Errorf("%+v; want one charge, of order-43", led)
	}
}

// Lessons 10 to 12 against a real redis-server ($IDEMLAB_TEST_REDIS).
func TestSetNXLessonsRealRedis(t *testing.T) {
	t.Parallel()
	s := startServer(t, withRealRedis(t))
	setNXOnce(t, s)
	lesson11(t, s)
	lesson12(t, s)
}

// The crash after the guard under every protection: where the guard and
// the payment are one SQL transaction nothing stays, and the retry charges
// once. (set-nx and replay keep their guard: lesson12.)
func TestCrashAfterGuardRollsBack(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	for _, p := range []sim.Protection{sim.ProtectNone, sim.ProtectCheckThenInsert, sim.ProtectUnique, sim.ProtectOnConflict} {
		lab := s.newLab(fmt.Sprintf(`{"protection":%q,"key_strategy":"uuid","server_fault":"crash-after-guard"}`, p))
		op := s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"ok"}`)
		if a := lastAttempt(op); a.Outcome != sim.OutcomeDropped {
			t.Errorf("%s: the crashed charge is %s, want dropped", p, a.Outcome)
		}
		if led := s.ledger(lab); led.Count != 0 {
			t.Errorf("%s: %d charges after the crash; want none (rolled back)", p, led.Count)
		}
		s.must(http.StatusOK, "PATCH", lab+"/settings", `{"server_fault":"none"}`)
		op = s.retry(lab, op.ID, `{"fate":"ok"}`)
		if a := lastAttempt(op); a.Outcome != sim.OutcomeCharged {
			t.Errorf("%s: the retry is %s, want charged", p, a.Outcome)
		}
		if led := s.ledger(lab); led.Count != 1 {
			t.Errorf("%s: %d charges; want 1", p, led.Count)
		}
		if ks := s.keysOf(lab); (p == sim.ProtectUnique || p == sim.ProtectOnConflict) != (len(ks) == 1 && ks[0].State == "unique" && ks[0].TTLMS == nil) {
			t.Errorf("%s: keys %+v", p, ks)
		}
	}
}

// The clock and the keys refuse bad input by name, changing nothing.
func TestClockRefusesBadInput(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	lab := s.newLab(`{"protection":"set-nx","key_strategy":"uuid"}`)
	for _, body := range []string{`{}`, `{"advance_s":0}`, `{"advance_s":-5}`, `{"advance_s":1.5}`, `{"advance_s":"60"}`, `{"advance_s":99999999999}`, `{"advance_s":60,"x":1}`} {
		r := s.do("POST", lab+"/clock", body)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "advance_s") && !strings.Contains(string(r.Body), `"x"`) {
			t.Errorf("POST clock %s: %d %s; want 400 naming the field", body, r.Status, r.Body)
		}
	}
	r := s.must(http.StatusOK, "GET", lab+"/keys", "").JSON(t)
	if now, _ := time.Parse(time.RFC3339, r["now"].(string)); time.Until(now) > 5*time.Second {
		t.Errorf("a refused move moved the clock: %v", r["now"])
	}
	// A retried move with the same Idempotency-Key moves the clock once.
	a := s.must(http.StatusOK, "POST", lab+"/clock", `{"advance_s":3600}`, "Idempotency-Key", "move-1").JSON(t)["now"]
	b := s.must(http.StatusOK, "POST", lab+"/clock", `{"advance_s":3600}`, "Idempotency-Key", "move-1").JSON(t)["now"]
	if a != b {
		t.Errorf("the retried move answered %v, then %v; want the same answer", a, b)
	}
	now, _ := time.Parse(time.RFC3339, s.must(http.StatusOK, "GET", lab+"/keys", "").JSON(t)["now"].(string))
	if d := time.Until(now); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("the lab's clock is %v ahead; want one hour", d)
	}
}
