package sim

import "net/http"

// The charge endpoint's contract, in one table: for each thing the server
// can do with a charge request, the status it answers with and whether the
// answer is a stored one sent again (Idempotent-Replayed: true). The server
// answers by it (ChargeResult, and the problems of the web layer); the
// simulated network reads the server's answers back by it (OutcomeOf).
var chargeAnswers = []struct {
	Outcome  Outcome
	Status   int
	Replayed bool
}{
	{OutcomeCharged, http.StatusCreated, false},
	{OutcomeReplayed, http.StatusCreated, true},
	{OutcomeDuplicate, http.StatusOK, false},
	{OutcomeInFlight, http.StatusConflict, false},
	{OutcomeMismatch, http.StatusUnprocessableEntity, false},
	{OutcomeRejected, http.StatusBadRequest, false},
}

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
// for POST.
func OutcomeOfMethod(method string, status int, h http.Header) Outcome {
	for _, a := range orderAnswers {
		if a.Method == method && a.Status == status {
			return a.Outcome
		}
	}
	return OutcomeOf(status, h)
}

// OutcomeOf tells what the server did from its answer to a charge request.
func OutcomeOf(status int, h http.Header) Outcome {
	replayed := h.Get("Idempotent-Replayed") == "true"
	for _, a := range chargeAnswers {
		if a.Status == status && a.Replayed == replayed {
			return a.Outcome
		}
	}
	if status >= 500 {
		return OutcomeFailed
	}
	return OutcomeRejected // any other 4xx: the request was refused
}
