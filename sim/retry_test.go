package sim_test

import (
	mrand "math/rand/v2"
	"testing"
	"time"

	"idemlab/sim"
)

func TestBackoffWithoutJitterDoublesUpToTheCap(t *testing.T) {
	p := sim.RetryPolicy{BaseMS: 100, CapMS: 1000, Jitter: sim.JitterNone}
	r := mrand.New(mrand.NewPCG(1, 2))
	var got []time.Duration
	for k := 1; k <= 6; k++ {
		got = append(got, p.Backoff(k, 0, r))
	}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("delays %v, want %v ms", got, want)
		}
	}
}

// Each jitter stays within the bounds of its formula (AWS, "Exponential
// Backoff and Jitter"), and actually varies.
func TestBackoffJitterBounds(t *testing.T) {
	const base, limit = 100 * time.Millisecond, 1000 * time.Millisecond
	for _, tc := range []struct {
		jitter sim.Jitter
		lo, hi func(k int, prev time.Duration) time.Duration
	}{
		{sim.JitterFull, func(int, time.Duration) time.Duration { return 0 }, expo},
		{sim.JitterEqual, func(k int, _ time.Duration) time.Duration { return expo(k, 0) / 2 }, expo},
		{sim.JitterDecorrelated, func(int, time.Duration) time.Duration { return base },
			func(_ int, prev time.Duration) time.Duration { return min(limit, max(base, prev*3)) }},
	} {
		t.Run(string(tc.jitter), func(t *testing.T) {
			p := sim.RetryPolicy{BaseMS: 100, CapMS: 1000, Jitter: tc.jitter}
			r := mrand.New(mrand.NewPCG(7, 7))
			seen := map[time.Duration]bool{}
			prev := base
			for i := range 200 {
				k := 1 + i%6
				d := p.Backoff(k, prev, r)
				if d < tc.lo(k, prev) || d > tc.hi(k, prev) {
					t.Fatalf("retry %d (prev %v): %v outside [%v, %v]", k, prev, d, tc.lo(k, prev), tc.hi(k, prev))
				}
				seen[d] = true
				prev = d
			}
			if len(seen) < 20 {
				t.Errorf("only %d distinct delays in 200: no jitter", len(seen))
			}
		})
	}
}

func expo(k int, _ time.Duration) time.Duration {
	return min(1000*time.Millisecond, 100*time.Millisecond<<(k-1))
}
