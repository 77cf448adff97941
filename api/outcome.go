package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"idemlab/sim"
)

// chargeAnswers is the charge endpoint's contract in one table: for each
// thing the server can do with a charge request, the status it answers
// with, whether the answer is a stored one sent again (Idempotent-Replayed:
// true), and the problem type that tells two outcomes of one status apart.
// The server answers by it; the simulated network reads the server's
// answers back by it (OutcomeOf).
var chargeAnswers = []struct {
	Outcome  sim.Outcome
	Status   int
	Replayed bool
	Problem  string // the slug of the problem type, for a problem answer
	Exact    bool   // read from this problem type only: another of its status is not this outcome
}{
	{sim.OutcomeCharged, http.StatusCreated, false, "", false},
	{sim.OutcomeReplayed, http.StatusCreated, true, "", false},
	{sim.OutcomeDuplicate, http.StatusOK, false, "", false},
	{sim.OutcomeInFlight, http.StatusConflict, false, ProblemInFlight.Slug, false},
	{sim.OutcomeConflict, http.StatusConflict, false, ProblemConflict.Slug, false},
	{sim.OutcomeMismatch, http.StatusUnprocessableEntity, false, "", false},
	{sim.OutcomeRejected, http.StatusBadRequest, false, "", false},
	{sim.OutcomeUnavailable, http.StatusServiceUnavailable, false, ProblemDatabaseDown.Slug, true},
	{sim.OutcomeUnavailable, http.StatusServiceUnavailable, false, ProblemRedisDown.Slug, true},
}

// StatusOf is the status the charge endpoint answers an outcome with.
func StatusOf(o sim.Outcome) int {
	for _, a := range chargeAnswers {
		if a.Outcome == o {
			return a.Status
		}
	}
	return http.StatusInternalServerError
}

// orderAnswers is the orders' contract: what PUT and DELETE answer.
var orderAnswers = []struct {
	Method  string
	Status  int
	Outcome sim.Outcome
}{
	{http.MethodPut, http.StatusCreated, sim.OutcomeCreated},
	{http.MethodPut, http.StatusOK, sim.OutcomeUpdated},
	{http.MethodDelete, http.StatusNoContent, sim.OutcomeDeleted},
	{http.MethodDelete, http.StatusNotFound, sim.OutcomeAbsent},
}

// OutcomeOf tells what the server did from its answer to a request of the
// method: the orders' contract for PUT and DELETE, the charge's for POST.
// body is the answer's body, read for its problem type where two outcomes
// share one status.
func OutcomeOf(method string, status int, h http.Header, body []byte) sim.Outcome {
	for _, a := range orderAnswers {
		if a.Method == method && a.Status == status {
			return a.Outcome
		}
	}
	return chargeOutcome(status, h.Get(HeaderReplayed) == "true", ProblemSlug(h, body))
}

// chargeOutcome reads an answer to a charge by the contract: by its status,
// and where two outcomes share one, by its problem type.
func chargeOutcome(status int, replayed bool, problem string) sim.Outcome {
	for _, a := range chargeAnswers {
		if a.Status == status && a.Replayed == replayed && (a.Problem == "" || a.Problem == problem) {
			return a.Outcome
		}
	}
	for _, a := range chargeAnswers { // a problem of a type not in the table
		if a.Status == status && a.Replayed == replayed && !a.Exact {
			return a.Outcome
		}
	}
	if status >= 500 {
		return sim.OutcomeFailed
	}
	return sim.OutcomeRejected // any other 4xx: the request was refused
}

// ProblemSlug is the slug of a problem answer's type (RFC 9457), or "".
func ProblemSlug(h http.Header, body []byte) string {
	if !strings.HasPrefix(h.Get("Content-Type"), ContentProblem) {
		return ""
	}
	var p struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &p) != nil {
		return ""
	}
	return strings.TrimPrefix(p.Type, ProblemBase)
}

// RetryAfter reads a Retry-After header given in seconds; 0 when absent.
func RetryAfter(h http.Header) time.Duration {
	s, err := strconv.Atoi(h.Get(HeaderRetryAfter))
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}
