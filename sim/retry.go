package sim

import (
	mrand "math/rand/v2"
	"time"
)

// Backoff returns how long to wait before retry number k (1 for the first
// retry), by the AWS "Exponential Backoff and Jitter" formulas. prev is the
// previous sleep, used by decorrelated jitter (start it at the base).
func (p RetryPolicy) Backoff(k int, prev time.Duration, r *mrand.Rand) time.Duration {
	base := time.Duration(p.BaseMS) * time.Millisecond
	limit := time.Duration(p.CapMS) * time.Millisecond
	exp := base
	for i := 1; i < k && exp < limit; i++ {
		exp *= 2
	}
	exp = min(exp, limit)
	switch p.Jitter {
	case JitterFull: // random_between(0, min(cap, base * 2^k))
		return randBetween(r, 0, exp)
	case JitterEqual: // temp/2 + random_between(0, temp/2)
		return exp/2 + randBetween(r, 0, exp/2)
	case JitterDecorrelated: // min(cap, random_between(base, sleep * 3))
		return min(limit, randBetween(r, base, max(base, prev*3)))
	}
	return exp
}

func randBetween(r *mrand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
}

// Retryable reports whether an attempt's result is worth retrying: no answer
// at all, the key still in flight, or a server failure. A 2xx is done and any
// other 4xx will not change by asking again.
func Retryable(status int, err error) bool {
	return err != nil || status == 0 || status == 409 || status == 429 || status >= 500
}
