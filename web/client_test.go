package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"idemlab/sim"
)

// The automatic retry policy keeps trying while no answer comes back, and
// stops at max_attempts; with no protection every lost answer was a charge.
func TestAutoRetryStopsAtMaxAttempts(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"network":"response-lost","retry":{"mode":"auto","max_attempts":3,"base_ms":1,"cap_ms":5,"jitter":"none"}}`)
	op := s.operation(lab, `{"order_id":"order-42","amount":1500}`)
	if len(op.Attempts) != 3 {
		t.Fatalf("%d attempts, want 3", len(op.Attempts))
	}
	if l := s.ledger(lab); l.Count != 3 {
		t.Errorf("%d charges, want 3", l.Count)
	}
}

// The loop ends at the first final answer: after a lost answer, the next
// attempt gets through (the network is ok again) and the loop stops there.
func TestAutoRetryStopsOnSuccess(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"protection":"replay","key_strategy":"uuid","retry":{"mode":"auto","max_attempts":5,"base_ms":1,"cap_ms":5}}`)
	op := s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"response-lost"}`)
	got := outcomes(op)
	want := []sim.Outcome{sim.OutcomeCharged, sim.OutcomeReplayed}
	if !cmp.Equal(got, want) {
		t.Errorf("outcomes %v, want %v", got, want)
	}
	if op.Attempts[1].Status != http.StatusCreated {
		t.Errorf("the retry saw %d, want the replayed 201", op.Attempts[1].Status)
	}
}

// A slow answer: the client gives up at its timeout while the server is
// still working; a retry then finds the key in flight (409), and the late
// answer is recorded once it arrives.
func TestSlowAnswerAndRetryInFlight(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	// (a second for the client's answers, however busy the machine; the
	// server works three times as long)
	lab := s.newLab(`{"protection":"replay","key_strategy":"uuid","client_timeout_ms":1000,"server_delay_ms":3000}`)
	op := s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"slow"}`)
	a := op.Attempts[0]
	if a.Status != 0 || a.Error == nil || a.Outcome != sim.OutcomePending {
		t.Errorf("slow attempt: status %d, error %v, outcome %s; want 0, a timeout, pending", a.Status, a.Error, a.Outcome)
	}
	op = s.retry(lab, op.ID, "")
	if a := op.Attempts[1]; a.Status != http.StatusConflict || a.Outcome != sim.OutcomeInFlight {
		t.Errorf("retry during the work: %d %s, want 409 in-flight", a.Status, a.Outcome)
	}
	poll(10*time.Second, func() bool {
		r := s.must(http.StatusOK, "GET", lab+"/operations/"+op.ID, "")
		op = decode[sim.Operation](t, r.Body)
		return op.Attempts[0].Outcome != sim.OutcomePending
	})
	if got := op.Attempts[0].Outcome; got != sim.OutcomeCharged {
		t.Errorf("the slow attempt's late outcome: %s, want charged", got)
	}
	op = s.retry(lab, op.ID, "")
	if a := op.Attempts[2]; a.Outcome != sim.OutcomeReplayed {
		t.Errorf("retry after the work: %s, want replayed", a.Outcome)
	}
	if l := s.ledger(lab); l.Count != 1 {
		t.Errorf("%d charges, want 1", l.Count)
	}
}

// A duplicated request reaches the server twice from one client attempt;
// both copies are recorded.
func TestDuplicateDelivery(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, tc := range []struct {
		settings string
		charges  int64
	}{
		{`{"protection":"none","key_strategy":"uuid"}`, 2},
		{`{"protection":"on-conflict","key_strategy":"uuid"}`, 1},
	} {
		lab := s.newLab(tc.settings)
		op := s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"duplicate"}`)
		if n := len(op.Attempts[0].Deliveries); n != 2 {
			t.Errorf("%s: %d deliveries, want 2", tc.settings, n)
		}
		if l := s.ledger(lab); l.Count != tc.charges {
			t.Errorf("%s: %d charges, want %d", tc.settings, l.Count, tc.charges)
		}
	}
}

// Retry without key under UNIQUE: the key is what the constraint guards, so
// a retry that drops it charges again.
func TestRetryWithoutKey(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"protection":"unique","key_strategy":"uuid"}`)
	op := s.operation(lab, `{"order_id":"order-42","amount":1500,"fate":"response-lost"}`)
	op = s.retry(lab, op.ID, `{"with_key":false}`)
	if op.Attempts[1].Key != nil {
		t.Errorf("retry without key sent %q", *op.Attempts[1].Key)
	}
	if l := s.ledger(lab); l.Count != 2 {
		t.Errorf("%d charges, want 2", l.Count)
	}
}

// The seed makes every random choice repeatable: two labs with the same seed
// and the same actions reach the same attempts and the same ledger.
func TestSeedMakesLabsRepeatable(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	play := func(seed int) (string, ledger) {
		lab := s.newLab(`{"protection":"unique","key_strategy":"uuid-per-request","network":"random","seed":` + itoa(seed) + `}`)
		var fates []string
		for i := range 6 {
			op := s.operation(lab, `{"order_id":"order-`+itoa(i%3)+`","amount":100}`)
			op = s.retry(lab, op.ID, `{"fate":"random"}`)
			for _, a := range op.Attempts {
				fates = append(fates, string(a.Fate)+":"+string(a.Outcome)+":"+*a.Key)
			}
		}
		return strings.Join(fates, " "), s.ledger(lab)
	}
	fates1, ledger1 := play(7)
	fates2, ledger2 := play(7)
	fates3, _ := play(8)
	if fates1 != fates2 {
		t.Errorf("same seed, different attempts:\n%s\n%s", fates1, fates2)
	}
	ignore := cmpopts.IgnoreFields(sim.Payment{}, "ID", "CreatedAt")
	if d := cmp.Diff(ledger1, ledger2, ignore); d != "" {
		t.Errorf("same seed, different ledgers (-first +second):\n%s", d)
	}
	if fates1 == fates3 {
		t.Error("a different seed gave the very same attempts")
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// Reset empties the ledger and history but keeps the settings.
func TestResetKeepsSettings(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"protection":"unique","check_gap_ms":7}`)
	op := s.operation(lab, `{"order_id":"order-42","amount":1500}`)
	s.must(http.StatusNoContent, "POST", lab+"/reset", "")
	s.must(http.StatusNoContent, "POST", lab+"/reset", "") // and again: reset is safe to retry
	if l := s.ledger(lab); l.Count != 0 || l.Total != 0 {
		t.Errorf("after reset: %d charges, %d ₽", l.Count, l.Total)
	}
	s.must(http.StatusNotFound, "GET", lab+"/operations/"+op.ID, "")
	st := decode[sim.Settings](t, s.must(http.StatusOK, "GET", lab+"/settings", "").Body)
	if st.Protection != sim.ProtectUnique || st.CheckGapMS != 7 {
		t.Errorf("settings after reset: %+v", st)
	}
}

// Private labs are isolated and their ids unguessable (128 random bits).
func TestPrivateLabs(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a, b := s.newLab(""), s.newLab("")
	if a == b || len(strings.TrimPrefix(a, "/api/v1/labs/")) != 22 {
		t.Fatalf("lab ids %s, %s", a, b)
	}
	s.operation(a, `{"order_id":"order-42","amount":1500}`)
	if l := s.ledger(b); l.Count != 0 {
		t.Errorf("a charge in one lab shows in another: %d", l.Count)
	}
	if l := s.ledger("/api/v1/labs/demo"); l.Count != 0 {
		t.Errorf("a private lab's charge shows in demo: %d", l.Count)
	}
}

// "latest" names the newest operation, so curl users need not copy ids.
func TestLatestOperationAlias(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	s.must(http.StatusNotFound, "POST", lab+"/operations/latest/retry", "")
	s.operation(lab, `{"order_id":"order-1","amount":100}`)
	second := s.operation(lab, `{"order_id":"order-2","amount":200}`)
	op := s.retry(lab, "latest", "")
	if op.ID != second.ID || len(op.Attempts) != 2 {
		t.Errorf("retry of latest went to %s with %d attempts, want %s with 2", op.ID, len(op.Attempts), second.ID)
	}
}

// HEAD is answered wherever GET is (RFC 9110), without a body.
func TestHeadAnswersLikeGet(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, path := range []string{"/healthz", "/api/v1/labs/demo/payments", "/api/v1/labs/demo/settings", "/problems/not-found"} {
		r := s.do("HEAD", path, "")
		if r.Status != http.StatusOK || len(r.Body) != 0 {
			t.Errorf("HEAD %s: %d with %d bytes, want 200 and no body", path, r.Status, len(r.Body))
		}
	}
}

// A browser's cross-site write to the API is refused (Fetch Metadata);
// programs, which send no such header, and the lab's own pages are served.
func TestCrossSiteWritesRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	s.operation(lab, `{"order_id":"order-42","amount":1500}`)
	for _, site := range []string{"cross-site", "same-site"} {
		r := s.do("POST", lab+"/reset", "", "Sec-Fetch-Site", site)
		if r.Status != http.StatusForbidden || r.JSON(t)["type"] != "/problems/cross-site-request" {
			t.Errorf("reset from %s: %d %s, want 403", site, r.Status, r.Body)
		}
	}
	if l := s.ledger(lab); l.Count != 1 {
		t.Errorf("a refused reset emptied the ledger: %d", l.Count)
	}
	s.must(http.StatusOK, "GET", lab+"/payments", "", "Sec-Fetch-Site", "cross-site") // reading is fine
	s.must(http.StatusNoContent, "POST", lab+"/reset", "", "Sec-Fetch-Site", "same-origin")
}
