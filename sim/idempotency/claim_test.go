package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/sim/idempotency"
)

// A claim's life, as the lab's own API uses it: taken once, refused while
// in flight or for another request, taken over when its lock times out
// (whose first holder may then no longer finish), replayed once finished,
// and new again once expired.
func TestClaimLife(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		b := openHouse(t, dsn(t))
		l := b.NewLab(t, sim.ProtectNone, nil)
		ctx := context.Background()
		const ttl, lock = time.Minute, 5 * time.Second
		stored := sim.Stored{Status: 201, Body: []byte(`{"id":"lab-1"}`), Location: "/api/v1/labs/x", ContentType: "application/json"}
		var claims []*idempotency.Claim // those taken, in order
		for i, st := range []struct {
			finish  int           // finish the claim taken so (1: the first), instead of claiming
			fp      string        // the request's fingerprint
			advance time.Duration // the clock moves this far first
			want    string        // "claimed", "replayed", "finished", or an error code
		}{
			{fp: "a", want: "claimed"},
			{fp: "a", want: string(sim.EInFlight)},
			{fp: "b", want: string(sim.EKeyReused)},
			{fp: "a", advance: lock - time.Millisecond, want: string(sim.EInFlight)},
			{fp: "a", advance: time.Millisecond, want: "claimed"}, // the first holder is taken to be dead
			{finish: 1, want: string(sim.EInFlight)},              // it was not: too late
			{finish: 2, want: "finished"},
			{fp: "a", want: "replayed"},
			{fp: "b", want: string(sim.EKeyReused)},
			{fp: "a", advance: ttl, want: "claimed"}, // expired
		} {
			b.Clock.Advance(st.advance)
			var (
				got string
				err error
			)
			if st.finish > 0 {
				err, got = claims[st.finish-1].Finish(ctx, stored), "finished"
			} else {
				var c *idempotency.Claim
				c, err = b.H.Records.Claim(ctx, l, "labs", "key-1", st.fp, ttl, lock)
				switch {
				case err != nil:
				case c.Replay != nil:
					got = "replayed"
					if diff := cmp.Diff(stored, *c.Replay); diff != "" {
						t.Errorf("step %d: the replay is not the stored answer (-stored +replay):\n%s", i+1, diff)
					}
				default:
					got = "claimed"
					claims = append(claims, c)
				}
			}
			if err != nil {
				got = string(sim.ErrorCode(err))
				var e *sim.Error
				if errors.As(err, &e) && e.Code == sim.EInFlight && (e.RetryAfter <= 0 || e.RetryAfter > lock) {
					t.Errorf("step %d: Retry-After %v, want within (0, %v]", i+1, e.RetryAfter, lock)
				}
			}
			if got != st.want {
				t.Errorf("step %d: %s, want %s (%v)", i+1, got, st.want, err)
			}
		}
	})
}
