package sim

// Outcome is what the server did with one request.
type Outcome string

// The outcomes of a charge request, and of an attempt that never got one.
const (
	OutcomeNotReached  Outcome = "not-reached" // the network lost the request
	OutcomePending     Outcome = "pending"     // the server has not answered yet
	OutcomeCharged     Outcome = "charged"     // a new payment was written
	OutcomeDuplicate   Outcome = "duplicate"   // the key was seen: no new payment
	OutcomeReplayed    Outcome = "replayed"    // the first answer was sent again
	OutcomeInFlight    Outcome = "in-flight"   // 409: the first request is still running
	OutcomeConflict    Outcome = "conflict"    // 409: the database failed the transaction (40001): retry
	OutcomeMismatch    Outcome = "mismatch"    // 422: the key came with another body
	OutcomeRejected    Outcome = "rejected"    // 400: the request was refused
	OutcomeFailed      Outcome = "failed"      // the server failed (5xx)
	OutcomeUnknown     Outcome = "unknown"     // the lab restarted while the attempt was on its way
	OutcomeDropped     Outcome = "dropped"     // the server took the request and died: the connection dropped, no answer
	OutcomeUnavailable Outcome = "unavailable" // 503: a part the server depends on (the database, Redis) did not answer; nothing was charged

	// The orders' outcomes: PUT and DELETE.
	OutcomeCreated Outcome = "created" // PUT: 201, the order is new
	OutcomeUpdated Outcome = "updated" // PUT: 200, the order was there: its state is set again
	OutcomeDeleted Outcome = "deleted" // DELETE: 204
	OutcomeAbsent  Outcome = "absent"  // DELETE: 404, there was no order (any more)
)

// ToldDone reports whether the outcome told the client its charge was
// already made: a duplicate or a replayed answer.
func (o Outcome) ToldDone() bool { return o == OutcomeDuplicate || o == OutcomeReplayed }
