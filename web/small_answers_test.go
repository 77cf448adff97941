package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"idemlab/sim"
)

// problemField is the one field a 400 problem names, and what it says.
func problemField(t *testing.T, r response) (field, detail string) {
	t.Helper()
	if r.Status != http.StatusBadRequest {
		t.Fatalf("status %d, want 400\n%s", r.Status, r.Body)
	}
	p := decode[struct {
		Errors []sim.FieldError `json:"errors"`
	}](t, r.Body)
	if len(p.Errors) != 1 {
		t.Fatalf("errors %+v, want one\n%s", p.Errors, r.Body)
	}
	return p.Errors[0].Field, p.Errors[0].Detail
}

// A whole number is a whole number however JSON spells it: 1e3 and 1000.0
// are 1000. A fraction is not.
func TestWholeNumbersInAnySpelling(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	for _, in := range []string{`1e3`, `1E3`, `1000.0`, `1.0e3`, `1.000e+3`, `10000e-1`, `0.1e4`, `1000.000000000000000000`} {
		got := decode[sim.Settings](t, s.must(http.StatusOK, "PATCH", lab+"/settings", `{"ack_wait_ms":`+in+`}`).Body)
		if got.AckWaitMS != 1000 {
			t.Errorf("ack_wait_ms %s: %d, want 1000", in, got.AckWaitMS)
		}
		s.must(http.StatusOK, "PATCH", lab+"/settings", `{"ack_wait_ms":500}`)
	}
	got := decode[sim.Settings](t, s.must(http.StatusOK, "PATCH", lab+"/settings", `{"seed":-0.0,"retry":{"max_attempts":2e0}}`).Body)
	if got.Seed != 0 || got.Retry.MaxAttempts != 2 {
		t.Errorf("seed -0.0, max_attempts 2e0: %d, %d", got.Seed, got.Retry.MaxAttempts)
	}
	for _, in := range []string{`1.5`, `1000.5`, `1.0000000000000000001e3`, `15e-1`, `1e400`, `1e-400`} {
		field, detail := problemField(t, s.do("PATCH", lab+"/settings", `{"ack_wait_ms":`+in+`}`))
		if field != "ack_wait_ms" || !strings.Contains(detail, "whole number") {
			t.Errorf("ack_wait_ms %s: %s %q, want ack_wait_ms, a whole number", in, field, detail)
		}
	}
	if got := decode[sim.Settings](t, s.must(http.StatusOK, "GET", lab+"/settings", "").Body); got.AckWaitMS != 500 {
		t.Errorf("after the refusals ack_wait_ms is %d, want 500", got.AckWaitMS)
	}
}

// A number beyond what every JSON reader holds exactly is refused with
// the field's own range when the field has one.
func TestBeyondExactNamesTheFieldsRange(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"seed":7}`)
	for body, want := range map[string][2]string{
		`{"seed":9007199254740992}`:                   {"seed", "must be an integer from 0 to 9007199254740991"},
		`{"seed":-9007199254740992}`:                  {"seed", "must be an integer from 0 to 9007199254740991"},
		`{"seed":1e16}`:                               {"seed", "must be an integer from 0 to 9007199254740991"},
		`{"retry":{"max_attempts":9007199254740993}}`: {"retry.max_attempts", "must be an integer from 1 to 10"},
		`{"ack_wait_ms":1e17}`:                        {"ack_wait_ms", "must be an integer from 100 to 60000"},
	} {
		field, detail := problemField(t, s.do("PATCH", lab+"/settings", body))
		if field != want[0] || detail != want[1] {
			t.Errorf("%s: %s %q, want %s %q", body, field, detail, want[0], want[1])
		}
	}
	if got := decode[sim.Settings](t, s.must(http.StatusOK, "GET", lab+"/settings", "").Body); got.Seed != 7 {
		t.Errorf("seed %d after the refusals, want 7", got.Seed)
	}
}

// A PATCH says what to change; null says nothing and is refused, naming the
// member, rather than answered 200 with nothing changed.
func TestPatchNullIsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab(`{"protection":"unique"}`)
	for body, want := range map[string]string{
		`{"protection":null}`:                        "protection",
		`{"key_strategy":"uuid","seed":null}`:        "seed",
		`{"retry":null}`:                             "retry",
		`{"retry":{"mode":null}}`:                    "retry.mode",
		`{"retry":{"max_attempts":3,"jitter":null}}`: "retry.jitter",
	} {
		field, detail := problemField(t, s.do("PATCH", lab+"/settings", body))
		if field != want || !strings.Contains(detail, "null") {
			t.Errorf("%s: %s %q, want %s, not null", body, field, detail, want)
		}
	}
	r := s.do("PATCH", lab+"/settings", `null`)
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "must be a JSON object") {
		t.Errorf("PATCH null: %d %s, want 400, a JSON object", r.Status, r.Body)
	}
	if got := decode[sim.Settings](t, s.must(http.StatusOK, "GET", lab+"/settings", "").Body); got.Protection != sim.ProtectUnique || got.KeyStrategy != sim.KeyNone {
		t.Errorf("settings changed by refused patches: %+v", got)
	}
}

// A query parameter given twice is refused: one reader takes the first,
// another the last.
func TestRepeatedQueryParameterIsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	for _, path := range []string{
		"/payments?limit=1&limit=2", "/payments?offset=0&limit=5&offset=1", "/operations?limit=1&limit=1",
		"/emails?limit=1&limit=2", "/messages?limit=1&limit=2", "/orders?limit=1&limit=2",
	} {
		field, detail := problemField(t, s.do("GET", lab+path, ""))
		want := "limit"
		if strings.Contains(path, "offset=1") {
			want = "offset"
		}
		if field != want || detail != "must be sent once" {
			t.Errorf("%s: %s %q, want %s sent once", path, field, detail, want)
		}
	}
	s.must(http.StatusOK, "GET", lab+"/payments?limit=1&offset=0", "")
}

// A DELETE has no amount: an operation that deletes an order needs none.
func TestDeleteOperationNeedsNoAmount(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	s.must(http.StatusCreated, "POST", lab+"/operations", `{"order_id":"order-42","amount":1500,"method":"PUT"}`)
	op := decode[sim.Operation](t, s.must(http.StatusCreated, "POST", lab+"/operations", `{"order_id":"order-42","method":"DELETE"}`).Body)
	if len(op.Attempts) != 1 || op.Attempts[0].Outcome != sim.OutcomeDeleted {
		t.Errorf("DELETE without an amount: %+v, want one attempt, deleted", op.Attempts)
	}
	field, _ := problemField(t, s.do("POST", lab+"/operations", `{"method":"DELETE"}`))
	if field != "order_id" {
		t.Errorf("DELETE without an order: %s, want order_id", field)
	}
	field, _ = problemField(t, s.do("POST", lab+"/operations", `{"order_id":"order-42","method":"PUT"}`))
	if field != "amount" {
		t.Errorf("PUT without an amount: %s, want amount", field)
	}
}

// A lesson's step answers once what it caused has settled: the last step
// of lessons 7 and 8 says "met" at once, the redelivery after the
// consumer's crash and the second copy already counted, not "differs"
// until they come; the first step's two emails are there when it answers.
func TestLessonStepAnswersSettled(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	for _, n := range []int{7, 8} {
		for trial := range 2 {
			t.Run(fmt.Sprintf("lesson %d/%d", n, trial), func(t *testing.T) {
				t.Parallel()
				s := s.of(t)
				lab := s.newLab("")
				steps := s.must(http.StatusOK, "POST", lab+"/lesson", fmt.Sprintf(`{"lesson":%d}`, n)).JSON(t)["steps"].(float64)
				s.must(http.StatusOK, "POST", lab+"/lesson/setup", "")
				var got map[string]any
				for at := range int(steps) {
					got = s.must(http.StatusOK, "POST", lab+"/lesson/step", fmt.Sprintf(`{"at":%d}`, at)).JSON(t)
					if at > 0 {
						continue
					}
					// Step 0 charges order-42: two emails, by the redelivery (7) or the second copy (8).
					if mb := s.must(http.StatusOK, "GET", lab+"/emails", "").JSON(t); mb["count"] != float64(2) {
						t.Errorf("after step 0: %v emails, want 2", mb["count"])
					}
				}
				if got["state"] != "met" {
					t.Errorf("the last step answered %v, want met", got)
				}
			})
		}
	}
}
