package api

import (
	"net/http"

	"idemlab/sim"
)

// ProblemBase is the path under which each problem type has its page: a
// problem's type URI is ProblemBase + its slug.
const ProblemBase = "/problems/"

// ProblemType is one kind of error answer (RFC 9457): its slug names it in
// the type URI, its status and English title go in every answer of it.
// The words that explain it to people are the views'.
type ProblemType struct {
	Slug   string
	Status int
	Title  string
}

// URI is the problem type's type member: a page of this server.
func (t ProblemType) URI() string { return ProblemBase + t.Slug }

// The problem types of the API, one per way a request can fail. Those a
// charge can end in take their status from the charge endpoint's contract.
var (
	ProblemValidation = ProblemType{"validation-error", StatusOf(sim.OutcomeRejected), "The request is not valid"}
	ProblemKeyMissing = ProblemType{"idempotency-key-missing", StatusOf(sim.OutcomeRejected), "Idempotency-Key header required"}
	ProblemKeyReused  = ProblemType{"idempotency-key-reused", StatusOf(sim.OutcomeMismatch), "Idempotency key reused with a different request"}
	ProblemInFlight   = ProblemType{"request-in-flight", http.StatusConflict, "A request with this key is still in flight"}
	ProblemConflict   = ProblemType{"serialization-failure", http.StatusConflict, "The transaction lost a race: retry"}
	ProblemNotFound   = ProblemType{"not-found", http.StatusNotFound, "Not found"}
	ProblemVoteClosed = ProblemType{"vote-closed", http.StatusConflict, "The vote is closed"}
	ProblemMethod     = ProblemType{"method-not-allowed", http.StatusMethodNotAllowed, "Method not allowed"}
	ProblemTooLarge   = ProblemType{"body-too-large", http.StatusRequestEntityTooLarge, "Request body too large"}
	ProblemMediaType  = ProblemType{"unsupported-media-type", http.StatusUnsupportedMediaType, "Unsupported media type"}
	ProblemCrossSite  = ProblemType{"cross-site-request", http.StatusForbidden, "Request from another site"}
	ProblemForbidden  = ProblemType{"forbidden", http.StatusForbidden, "Forbidden"}
	ProblemRateLimit  = ProblemType{"rate-limited", http.StatusTooManyRequests, "Too many requests"}
	ProblemBusy       = ProblemType{"server-busy", http.StatusServiceUnavailable, "The server is busy"}
	ProblemInternal   = ProblemType{"internal-error", http.StatusInternalServerError, "Internal server error"}

	// A part the lab depends on does not answer: each is named by a type
	// of its own (and by the problem's limit member: database, kv, broker).
	ProblemDatabaseDown = ProblemType{"database-unavailable", http.StatusServiceUnavailable, "The database does not answer"}
	ProblemRedisDown    = ProblemType{"redis-unavailable", http.StatusServiceUnavailable, "Redis does not answer"}
	ProblemBrokerDown   = ProblemType{"broker-unavailable", http.StatusServiceUnavailable, "The message broker does not answer"}
	// A part stopped answering in the middle of the work: its outcome is
	// not known (the database, at a COMMIT).
	ProblemUnknown = ProblemType{"outcome-unknown", http.StatusServiceUnavailable, "Whether the request was done is not known"}
)

// ProblemUnavailable is the problem type of a part that does not answer
// (sim.PartDatabase, sim.PartKV, sim.PartBroker).
func ProblemUnavailable(part string) ProblemType {
	switch part {
	case sim.PartKV:
		return ProblemRedisDown
	case sim.PartBroker:
		return ProblemBrokerDown
	}
	return ProblemDatabaseDown
}

// ProblemTypes lists every problem type, in the order their pages list them.
func ProblemTypes() []ProblemType {
	return []ProblemType{ProblemValidation, ProblemKeyMissing, ProblemKeyReused, ProblemInFlight, ProblemConflict,
		ProblemNotFound, ProblemVoteClosed, ProblemMethod, ProblemTooLarge, ProblemMediaType, ProblemCrossSite, ProblemForbidden,
		ProblemRateLimit, ProblemBusy, ProblemDatabaseDown, ProblemRedisDown, ProblemBrokerDown, ProblemUnknown, ProblemInternal}
}
