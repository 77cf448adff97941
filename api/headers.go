package api

// The headers of the contract.
const (
	// HeaderKey carries the client's idempotency key (IETF draft
	// "The Idempotency-Key HTTP Header Field").
	HeaderKey = "Idempotency-Key"
	// HeaderReplayed marks an answer that is a stored one sent again.
	HeaderReplayed = "Idempotent-Replayed"
	// HeaderRetryAfter says when to try again (409, 429, 503), in seconds.
	HeaderRetryAfter = "Retry-After"
	// HeaderAttempt marks the requests of the lab's own simulated client
	// (its value: operation id and attempt number), so that the charge
	// endpoint can tell them from charges sent to it straight.
	HeaderAttempt = "Idemlab-Attempt"
	// HeaderStepped names a racer of a stepped race, by the token only the
	// lab's own client knows: its charge stops at the protection's points.
	HeaderStepped = "Idemlab-Stepped"
	// ContentProblem is the media type of an error answer (RFC 9457).
	ContentProblem = "application/problem+json"
	// ContentJSON is the media type of every other answer of the API.
	ContentJSON = "application/json"
)
