package ledger_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/waittest"
)

// storm is how many charges of one key arrive at once.
const storm = 200

// A storm of concurrent charges with one key: a protection in the database
// (or in the key-value store) lets exactly one through, whoever wins;
// without one, every request charges.
func TestDuplicateStorm(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		b := openHouse(t, dsn(t))
		for _, tc := range []struct {
			p        sim.Protection
			told     map[string]int
			payments int
		}{
			{sim.ProtectNone, map[string]int{charged: storm}, storm},
			{sim.ProtectUnique, map[string]int{charged: 1, duplicate: storm - 1}, 1},
			{sim.ProtectOnConflict, map[string]int{charged: 1, duplicate: storm - 1}, 1},
			{sim.ProtectReplay, map[string]int{charged: 1, replayed: storm - 1}, 1},
			{sim.ProtectSetNX, map[string]int{charged: 1, duplicate: storm - 1}, 1},
		} {
			t.Run(string(tc.p), func(t *testing.T) {
				l := b.NewLab(t, tc.p, nil)
				got := b.race(l, storm, sim.Charge{OrderID: "order-42", Amount: 1500, Key: key("storm")})
				if diff := cmp.Diff(tc.told, count(got)); diff != "" {
					t.Errorf("told (-want +got):\n%s", diff)
				}
				if got := b.Payments(t, l); got != tc.payments {
					t.Errorf("%d payments, want %d", got, tc.payments)
				}
			})
		}
	})
}

// Check-then-insert's race, lesson 3 (and 13): two charges of one key both
// run their SELECT before either INSERT, held there by check_gap_ms on the
// clock. On SQLite, and on PostgreSQL at READ COMMITTED, both find nothing
// and both charge; at SERIALIZABLE PostgreSQL fails the second (40001),
// told as a conflict to retry, whose retry is a duplicate.
func TestCheckThenInsertRace(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		b := openHouse(t, dsn(t))
		for _, tc := range []struct {
			isolation sim.Isolation
			postgres  bool // PostgreSQL only
			told      map[string]int
			payments  int
			retry     string // what the loser's retry is told
		}{
			{sim.IsolationReadCommitted, false, map[string]int{charged: 2}, 2, duplicate},
			{sim.IsolationSerializable, true, map[string]int{charged: 1, string(sim.EConflict): 1}, 1, duplicate},
		} {
			t.Run(string(tc.isolation), func(t *testing.T) {
				if tc.postgres && !b.H.Store.Postgres() {
					t.Skip("isolation levels are PostgreSQL's")
				}
				const gap = 100 * time.Millisecond
				l := b.NewLab(t, sim.ProtectCheckThenInsert, func(s *sim.Settings) {
					s.CheckGapMS, s.Isolation = int(gap/time.Millisecond), tc.isolation
				})
				c := sim.Charge{OrderID: "order-42", Amount: 1500, Key: key("race")}
				timers := b.Clock.TimersOf(gap)
				var got []result
				done := make(chan struct{})
				go func() { got = b.race(l, 2, c); close(done) }()
				t.Cleanup(func() { b.Clock.Advance(gap); <-done }) // a racer never outlives the test
				waittest.For(t, "both racers in the gap", func() bool { return b.Clock.TimersOf(gap) == timers+2 })
				b.Clock.Advance(gap)
				<-done
				if diff := cmp.Diff(tc.told, count(got)); diff != "" {
					t.Errorf("told (-want +got):\n%s", diff)
				}
				for _, r := range got {
					var e *sim.Error
					if errors.As(r.err, &e) && e.Code == sim.EConflict && e.RetryAfter <= 0 {
						t.Errorf("a conflict without Retry-After: %v", e)
					}
				}
				if got := b.Payments(t, l); got != tc.payments {
					t.Errorf("%d payments, want %d", got, tc.payments)
				}
				res, err := b.H.Ledger.Charge(context.Background(), l, c)
				if got := told(res, err); got != tc.retry {
					t.Errorf("the retry was told %s, want %s", got, tc.retry)
				}
			})
		}
	})
}

// result is one racer's answer.
type result struct {
	told string
	err  error
}

// race sends n copies of the charge to the lab at once and returns what
// each was told.
func (b lab) race(l *labs.Lab, n int, c sim.Charge) []result {
	out := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			<-start
			res, err := b.H.Ledger.Charge(context.Background(), l, c)
			out[i] = result{told(res, err), err}
		})
	}
	close(start)
	wg.Wait()
	return out
}

// count counts the racers by what they were told.
func count(rs []result) map[string]int {
	m := map[string]int{}
	for _, r := range rs {
		m[r.told]++
	}
	return m
}
