package sim

// Check is one question of the article's checklist, answered for a lab's
// settings: Yes is the answer that keeps a retry safe, except for the first
// question, whose yes says the other three matter.
type Check struct {
	Question string // the question's id: retried, key, atomic, same-answer
	Yes      bool
	Why      string // the id of the one-line reason
}

// Checklist answers the article's four questions for the settings:
//
//  1. Can the operation be called again by a retry, a timeout or a lost connection?
//  2. Does it carry an idempotency key that the client reuses on every retry?
//  3. Does the "already done" check rest on an atomic constraint, not a SELECT before the write?
//  4. Does a retry with the same key get the same result as the first call?
//
// Under notify "queue" the third question is asked of the consumer too: does
// its "already done" rest on an atomic constraint?
func Checklist(s Settings) []Check {
	retried := Check{Question: "retried", Yes: true, Why: "retried.network"}
	if s.Retry.Mode == RetryAuto {
		retried.Why = "retried.auto"
	}
	key := Check{Question: "key"}
	switch s.KeyStrategy {
	case KeyNone:
		key.Why = "key.none"
	case KeyUUIDPerRequest:
		key.Why = "key.per-request"
	default:
		key.Yes, key.Why = true, "key."+string(s.KeyStrategy)
	}
	atomic := Check{Question: "atomic", Why: "atomic." + string(s.Protection)}
	same := Check{Question: "same-answer", Why: "same." + string(s.Protection)}
	switch s.Protection {
	case ProtectUnique, ProtectOnConflict, ProtectSetNX:
		atomic.Yes = true
	case ProtectReplay:
		atomic.Yes, same.Yes = true, true
	}
	if !key.Yes && s.Protection != ProtectNone { // no key for the guard to hold on to
		atomic.Yes, same.Yes = false, false
		atomic.Why, same.Why = "atomic.no-key", "same.no-key"
	}
	checks := []Check{retried, key, atomic, same}
	if s.Notify == NotifyQueue {
		// The third question, asked of the consumer: the broker delivers at
		// least once.
		consumer := Check{Question: "consumer", Why: "consumer." + string(s.ConsumerDedup)}
		consumer.Yes = s.ConsumerDedup != DedupNone
		checks = append(checks, consumer)
	}
	return checks
}
