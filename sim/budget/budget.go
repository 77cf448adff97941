// Package budget is how much a lab's server takes and how much its client
// may retry: the capacity of the charge endpoint, a token bucket that
// answers past it with how long to wait; and the retry budgets that stop
// retries from multiplying the load when the server can least take it,
// gRPC's retry throttling (a token bucket of the client's own answers) and
// Envoy's and Finagle's budgets (retries at most a share of the recent
// first tries). Each is safe for concurrent use and keeps a state of fixed
// size, whatever the load.
package budget

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"idemlab/sim"
)

// Capacity admits at most rps requests a second: a token bucket
// (golang.org/x/time/rate, as the server's per-address limits) that holds
// one second's worth, full at first.
type Capacity struct {
	mu  sync.Mutex
	rps int
	b   *rate.Limiter
}

// Admit takes a request's token at now, or reports how long until one
// would be there. rps is the capacity as set now (at least 1); a change
// of it starts the bucket full again.
func (c *Capacity) Admit(now time.Time, rps int) (ok bool, wait time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.b == nil || c.rps != rps {
		c.rps, c.b = rps, rate.NewLimiter(rate.Limit(rps), rps)
	}
	if c.b.AllowN(now, 1) {
		return true, 0
	}
	return false, time.Duration((1 - c.b.TokensAt(now)) / float64(rps) * float64(time.Second))
}

// window is how far back the ratio budget counts, in seconds, as
// Finagle's default.
const window = 10

// Retries is the retry budget of one client, under its policy's kind:
//   - token-bucket (gRPC's retry throttling): the bucket starts with
//     max_tokens; each answer that calls for a retry takes one token, each
//     other gives token_ratio back, up to max_tokens; a retry may go only
//     while more than half the tokens are left;
//   - ratio (Envoy's and Finagle's): over the last ten seconds, retries are
//     at most budget_percent of the first tries;
//   - none: every retry the policy allows may go.
type Retries struct {
	mu     sync.Mutex
	kind   sim.Budget
	max    int
	tokens float64
	// The ratio's counts, a second each, the last ten: at[i] is the
	// second (unix) whose counts slot i holds.
	at             [window]int64
	first, retries [window]int
}

// reset starts the budget anew when the policy's kind or size changed.
func (b *Retries) reset(p sim.RetryPolicy) {
	if b.kind == p.Budget && b.max == p.MaxTokens {
		return
	}
	b.kind, b.max, b.tokens = p.Budget, p.MaxTokens, float64(p.MaxTokens)
	b.at, b.first, b.retries = [window]int64{}, [window]int{}, [window]int{}
}

// slot is the ratio's slot of the second of now, emptied when it held an
// older second.
func (b *Retries) slot(now time.Time) int {
	s := now.Unix()
	i := int(s % window)
	if b.at[i] != s {
		b.at[i], b.first[i], b.retries[i] = s, 0, 0
	}
	return i
}

// recent is the first tries and retries of the last ten seconds.
func (b *Retries) recent(now time.Time) (first, retries int) {
	s := now.Unix()
	for i := range window {
		if b.at[i] > s-window && b.at[i] <= s {
			first += b.first[i]
			retries += b.retries[i]
		}
	}
	return first, retries
}

// First notes a first try, sent at now.
func (b *Retries) First(now time.Time, p sim.RetryPolicy) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reset(p)
	b.first[b.slot(now)]++
}

// Answered notes an attempt's answer: failed when it calls for a retry (no
// answer, 409, 429, 5xx).
func (b *Retries) Answered(p sim.RetryPolicy, failed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reset(p)
	if failed {
		b.tokens = math.Max(0, b.tokens-1)
	} else {
		b.tokens = math.Min(float64(b.max), b.tokens+p.TokenRatio)
	}
}

// Retry reports whether a retry may go at now, and counts it when it may.
// A retry a person asks for goes whatever the budget (forced), and is
// counted all the same: it loads the server as any other.
func (b *Retries) Retry(now time.Time, p sim.RetryPolicy, forced bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reset(p)
	ok := true
	switch p.Budget {
	case sim.BudgetTokenBucket:
		ok = b.tokens > float64(b.max)/2
	case sim.BudgetRatio:
		first, retries := b.recent(now)
		ok = (retries+1)*100 <= p.BudgetPercent*first
	}
	if ok || forced {
		b.retries[b.slot(now)]++
	}
	return ok || forced
}
