package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/sim/clock"
	"idemlab/sim/events"
	"idemlab/sim/waittest"
)

const ms = time.Millisecond

// The automatic retry policy on a fake clock: each retry waits its backoff
// (jitter none: base, doubled, up to the cap), or the server's Retry-After
// when longer, up to the cap; the loop stops at a final answer or when the
// attempts run out. The test moves the clock by exactly each wait, after
// checking that a millisecond less does not end it: the requests reach the
// server at those virtual times, and at no other.
func TestAutoRetry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		network   sim.Fate
		answers   []answer
		max       int
		base, cap int // ms
		waits     []time.Duration
		// the retry budget (none unless set), and Retry-After ignored
		budget          sim.Budget
		tokens, percent int
		ignoreAfter     bool
	}{
		{name: "backoff doubles to the cap", answers: []answer{{status: 503}, {status: 503}, {status: 503}, {status: 503}, {status: 201}},
			max: 5, base: 100, cap: 300, waits: []time.Duration{100 * ms, 200 * ms, 300 * ms, 300 * ms}},
		{name: "stops at a final answer", answers: []answer{{status: 503}, {status: 201}},
			max: 5, base: 100, cap: 1000, waits: []time.Duration{100 * ms}},
		{name: "a refusal is final", answers: []answer{{status: 422}}, max: 5, base: 100, cap: 1000},
		{name: "a duplicate is final", answers: []answer{{status: 200}}, max: 5, base: 100, cap: 1000},
		{name: "the attempts run out", answers: []answer{{status: 500}},
			max: 3, base: 100, cap: 1000, waits: []time.Duration{100 * ms, 200 * ms}},
		{name: "no answer at all is retried", network: sim.FateResponseLost,
			max: 3, base: 50, cap: 1000, waits: []time.Duration{50 * ms, 100 * ms}},
		{name: "Retry-After honoured", answers: []answer{{status: 409, retryAfter: 1}, {status: 201}},
			max: 5, base: 100, cap: 2000, waits: []time.Duration{time.Second}},
		{name: "Retry-After up to the cap", answers: []answer{{status: 409, retryAfter: 5}, {status: 429, retryAfter: 5}, {status: 201}},
			max: 5, base: 100, cap: 500, waits: []time.Duration{500 * ms, 500 * ms}},
		{name: "the backoff when longer than Retry-After", answers: []answer{{status: 503}, {status: 503}, {status: 409, retryAfter: 1}, {status: 201}},
			max: 5, base: 600, cap: 5000, waits: []time.Duration{600 * ms, 1200 * ms, 2400 * ms}},
		{name: "Retry-After not respected", answers: []answer{{status: 503, retryAfter: 1}, {status: 201}},
			max: 5, base: 100, cap: 2000, waits: []time.Duration{100 * ms}, ignoreAfter: true},
		{name: "a token bucket spent", answers: []answer{{status: 503}}, budget: sim.BudgetTokenBucket, tokens: 4,
			max: 10, base: 100, cap: 1000, waits: []time.Duration{100 * ms}}, // 4 tokens: one failure leaves 3, two leave 2, not above half
		{name: "a ratio budget spent", answers: []answer{{status: 503}}, budget: sim.BudgetRatio, percent: 100,
			max: 10, base: 100, cap: 1000, waits: []time.Duration{100 * ms}}, // one first try: one retry
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := clock.NewFake(start)
			g := newRig(t, fake, &server{answers: tc.answers})
			l := g.newLab(t, func(s *sim.Settings) {
				s.KeyStrategy, s.Network = sim.KeyUUID, sim.FateOK
				if tc.network != "" {
					s.Network = tc.network
				}
				s.Retry.Mode, s.Retry.MaxAttempts, s.Retry.BaseMS, s.Retry.CapMS, s.Retry.Jitter = sim.RetryAuto, tc.max, tc.base, tc.cap, sim.JitterNone
				budgeted(&s.Retry, tc.budget, tc.tokens, tc.percent, !tc.ignoreAfter)
			})
			sub := g.bus.Subscribe(1024)
			defer sub.Close()
			started := g.async(t, func() (sim.Operation, error) { return g.c.Start(context.Background(), l, charge) })
			delays, want := g.backoffs(t, fake, sub, tc.waits)
			end := receive(t, "the operation's end", started)
			if end.err != nil {
				t.Fatalf("start: %v", end.err)
			}
			op := end.op
			if tc.budget != "" {
				if ev := next(t, sub, sim.EventRetry); ev.Retry == nil || !ev.Retry.Spent {
					t.Errorf("the loop's end announced %+v, want the budget spent", ev.Retry)
				}
			}
			if diff := cmp.Diff(tc.waits, delays); diff != "" {
				t.Errorf("the retries announced waits (-want +got):\n%s", diff)
			}
			var got []time.Duration
			for _, r := range g.srv.requests() {
				got = append(got, r.At)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("requests reached the server at (-want +got):\n%s", diff)
			}
			if len(op.Attempts) != len(tc.waits)+1 {
				t.Errorf("%d attempts, want %d", len(op.Attempts), len(tc.waits)+1)
			}
		})
	}
}

// budgeted sets p's retry budget (its default where zero) and whether it
// respects Retry-After.
func budgeted(p *sim.RetryPolicy, b sim.Budget, tokens, percent int, respect bool) {
	p.RespectRetryAfter = respect
	if b != "" {
		p.Budget = b
	}
	if tokens > 0 {
		p.MaxTokens = tokens
	}
	if percent > 0 {
		p.BudgetPercent = percent
	}
}

// backoffs moves the fake clock through each wait of a retry loop, once
// the client sleeps on it: by a millisecond less first, checking that the
// client still waits, then by the last millisecond. It returns the waits
// the client announced, and when its requests should reach the server.
func (g rig) backoffs(t *testing.T, fake *clock.Fake, sub *events.Sub, waits []time.Duration) (announced, at []time.Duration) {
	t.Helper()
	at = []time.Duration{0}
	for i, w := range waits {
		ev := next(t, sub, sim.EventRetry)
		announced = append(announced, ev.Retry.Delay)
		waittest.For(t, "the backoff's timer", func() bool { return fake.Timers() == 1 })
		fake.Advance(w - ms)
		if n := fake.Timers(); n != 1 || len(g.srv.requests()) != i+1 {
			t.Fatalf("retry %d: the client stopped waiting %v into its %v backoff", i+1, w-ms, w)
		}
		fake.Advance(ms)
		at = append(at, at[len(at)-1]+w)
	}
	return announced, at
}
