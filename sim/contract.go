package sim

import "net/http"

// The charge endpoint's contract, in one table: for each thing the server
// can do with a charge request, the status it answers with, whether the
// answer is a stored one sent again (Idempotent-Replayed: true), and the
// problem type that tells two outcomes of one status apart. The server
// answers by it (ChargeResult, and the problems of the web layer); the
// simulated network reads the server's answers back by it (OutcomeOf).
var chargeAnswers = []struct {
	Outcome  Outcome
	Status   int
	Replayed bool
	Problem  string // the slug of the problem type (/problems/{slug}), for a problem answer
}{
	{OutcomeCharged, http.StatusCreated, false, ""},
	{OutcomeReplayed, http.StatusCreated, true, ""},
	{OutcomeDuplicate, http.StatusOK, false, ""},
	{OutcomeInFlight, http.StatusConflict, false, ProblemInFlight},
	{OutcomeConflict, http.StatusConflict, false, ProblemConflict},
	{OutcomeMismatch, http.StatusUnprocessableEntity, false, ""},
	{OutcomeRejected, http.StatusBadRequest, false, ""},
}

// The problem types of the two 409s.
const (
	ProblemInFlight = "request-in-flight"
	ProblemConflict = "serialization-failure"
)

// StatusOf is the status the charge endpoint answers an outcome with.
func StatusOf(o Outcome) int {
	for _, a := range chargeAnswers {
		if a.Outcome == o {
			return a.Status
		}
	}
	return http.StatusInternalServerError
}

// The orders' contract: what PUT and DELETE answer, by method.
var orderAnswers = []struct {
	Method  string
	Status  int
	Outcome Outcome
}{
	{http.MethodPut, http.StatusCreated, OutcomeCreated},
	{http.MethodPut, http.StatusOK, OutcomeUpdated},
	{http.MethodDelete, http.StatusNoContent, OutcomeDeleted},
	{http.MethodDelete, http.StatusNotFound, OutcomeAbsent},
}

// OutcomeOfMethod tells what the server did from its answer to a request
// of the method: the orders' contract for PUT and DELETE, the charge's
// for POST. problem is the slug of the answer's problem type, or "".
func OutcomeOfMethod(method string, status int, h http.Header, problem string) Outcome {
	for _, a := range orderAnswers {
		if a.Method == method && a.Status == status {
			return a.Outcome
		}
	}
	return OutcomeOf(status, h, problem)
}

// OutcomeOf tells what the server did from its answer to a charge request:
// by its status, and where two outcomes share one, by its problem type.
func OutcomeOf(status int, h http.Header, problem string) Outcome {
	replayed := h.Get("Idempotent-Replayed") == "true"
	for _, a := range chargeAnswers {
		if a.Status == status && a.Replayed == replayed && (a.Problem == "" || a.Problem == problem) {
			return a.Outcome
		}
	}
	for _, a := range chargeAnswers { // a problem of a type not in the table
		if a.Status == status && a.Replayed == replayed {
			return a.Outcome
		}
	}
	if status >= 500 {
		return OutcomeFailed
	}
	return OutcomeRejected // any other 4xx: the request was refused
}
