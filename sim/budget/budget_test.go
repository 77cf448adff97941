package budget_test

import (
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/budget"
)

var t0 = time.Unix(1_700_000_000, 0)

// A capacity of rps admits a second's worth at once, then one every
// 1/rps, and tells a refused request how long until the next.
func TestCapacityAdmitsItsRate(t *testing.T) {
	var c budget.Capacity
	admitted := 0
	for range 15 {
		if ok, _ := c.Admit(t0, 10); ok {
			admitted++
		}
	}
	if admitted != 10 {
		t.Errorf("at once: %d of 15 admitted, want 10 (a second's worth)", admitted)
	}
	ok, wait := c.Admit(t0, 10)
	if ok || wait != 100*time.Millisecond {
		t.Errorf("the 16th: %v, wait %v; want refused, 100ms", ok, wait)
	}
	if ok, _ := c.Admit(t0.Add(100*time.Millisecond), 10); !ok {
		t.Error("a tenth of a second later: refused, want admitted")
	}
	if ok, _ := c.Admit(t0.Add(100*time.Millisecond), 10); ok {
		t.Error("the same instant again: admitted, want refused")
	}
	if ok, _ := c.Admit(t0.Add(100*time.Millisecond), 20); !ok {
		t.Error("the capacity changed: refused, want a full bucket")
	}
}

func policy(b sim.Budget) sim.RetryPolicy {
	p := sim.DefaultSettings().Retry
	p.Budget = b
	return p
}

// gRPC's retry throttling: ten tokens, a failure costs one, a success gives
// a tenth back; retries go while more than five are left.
func TestTokenBucketThrottlesAfterFailures(t *testing.T) {
	var b budget.Retries
	p := policy(sim.BudgetTokenBucket)
	for i := range 4 {
		b.Answered(p, true)
		if !b.Retry(t0, p, false) {
			t.Fatalf("after %d failures: no retry, want one (tokens above half)", i+1)
		}
	}
	b.Answered(p, true) // 5 left: not more than half
	if b.Retry(t0, p, false) {
		t.Error("after 5 failures: a retry, want none")
	}
	if !b.Retry(t0, p, true) {
		t.Error("a person's retry refused")
	}
	for range 10 {
		b.Answered(p, false)
	}
	if !b.Retry(t0, p, false) {
		t.Error("after ten successes (5 + 1 tokens): no retry, want one")
	}
}

// Envoy's and Finagle's budget: retries at most budget_percent of the first
// tries of the last ten seconds; older ones no longer count.
func TestRatioBudgetIsAShareOfRecentFirstTries(t *testing.T) {
	var b budget.Retries
	p := policy(sim.BudgetRatio)
	p.BudgetPercent = 10
	for range 20 {
		b.First(t0, p)
	}
	allowed := 0
	for range 5 {
		if b.Retry(t0.Add(time.Second), p, false) {
			allowed++
		}
	}
	if allowed != 2 {
		t.Errorf("20 first tries at 10%%: %d retries allowed, want 2", allowed)
	}
	if b.Retry(t0.Add(11*time.Second), p, false) {
		t.Error("eleven seconds later, with no first try since: a retry, want none")
	}
	for range 10 {
		b.First(t0.Add(12*time.Second), p)
	}
	if !b.Retry(t0.Add(12*time.Second), p, false) {
		t.Error("after ten new first tries: no retry, want one")
	}
}

// Under none every retry goes.
func TestNoBudgetLetsEveryRetryGo(t *testing.T) {
	var b budget.Retries
	p := policy(sim.BudgetNone)
	for range 100 {
		b.Answered(p, true)
		if !b.Retry(t0, p, false) {
			t.Fatal("a retry refused without a budget")
		}
	}
}
