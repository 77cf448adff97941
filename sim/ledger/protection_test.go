package ledger_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/labs"
	"idemlab/sim/ledger"
)

// step is one charge request of a case, as the server receives it.
type step struct {
	key     string          // "" sends none
	amount  int64           // 0: 1500
	fault   sim.ServerFault // "" leaves the lab's server_fault as it is
	advance time.Duration   // the clock moves this far first
	broken  bool            // the database refuses to write payments meanwhile
}

// outcome is what a protection told each step, and the payments it left.
type outcome struct {
	told     []string
	payments int
}

func want(payments int, told ...string) outcome { return outcome{told, payments} }

// Words of the table: what the server told, by outcome or error code.
const (
	charged   = string(sim.OutcomeCharged)
	duplicate = string(sim.OutcomeDuplicate)
	replayed  = string(sim.OutcomeReplayed)
	inFlight  = string(sim.EInFlight)
	reused    = string(sim.EKeyReused)
	missing   = string(sim.EKeyMissing)
	crashed   = string(sim.ECrashed)
	internal  = string(sim.EInternal)
)

const lock = 5 * time.Second // the labs' lock_timeout_ms

// The rules of every protection, one row a story told to each: what the
// server tells each request, and how many payments the ledger holds after.
var rules = []struct {
	name  string
	steps []step
	want  map[sim.Protection]outcome
}{{
	name:  "first charge",
	steps: []step{{key: "k1"}},
	want: map[sim.Protection]outcome{
		sim.ProtectNone: want(1, charged), sim.ProtectCheckThenInsert: want(1, charged),
		sim.ProtectUnique: want(1, charged), sim.ProtectOnConflict: want(1, charged),
		sim.ProtectReplay: want(1, charged), sim.ProtectSetNX: want(1, charged),
	},
}, {
	name:  "the same key again",
	steps: []step{{key: "k1"}, {key: "k1"}, {key: "k1"}},
	want: map[sim.Protection]outcome{
		sim.ProtectNone:            want(3, charged, charged, charged),
		sim.ProtectCheckThenInsert: want(1, charged, duplicate, duplicate),
		sim.ProtectUnique:          want(1, charged, duplicate, duplicate),
		sim.ProtectOnConflict:      want(1, charged, duplicate, duplicate),
		sim.ProtectReplay:          want(1, charged, replayed, replayed),
		sim.ProtectSetNX:           want(1, charged, duplicate, duplicate),
	},
}, {
	name:  "no key",
	steps: []step{{}, {}},
	want: map[sim.Protection]outcome{
		sim.ProtectNone: want(2, charged, charged), sim.ProtectCheckThenInsert: want(2, charged, charged),
		sim.ProtectUnique: want(2, charged, charged), sim.ProtectOnConflict: want(2, charged, charged),
		sim.ProtectReplay: want(0, missing, missing), sim.ProtectSetNX: want(2, charged, charged),
	},
}, {
	name:  "the same key with another body",
	steps: []step{{key: "k1"}, {key: "k1", amount: 2500}},
	want: map[sim.Protection]outcome{
		sim.ProtectNone:            want(2, charged, charged),
		sim.ProtectCheckThenInsert: want(1, charged, duplicate),
		sim.ProtectUnique:          want(1, charged, duplicate),
		sim.ProtectOnConflict:      want(1, charged, duplicate),
		sim.ProtectReplay:          want(1, charged, reused),
		sim.ProtectSetNX:           want(1, charged, duplicate),
	},
}, {
	// Lesson 12: the server takes its guard and dies before the payment
	// commits; the retries come after the fault is gone.
	name: "crash after the guard, then retries",
	steps: []step{
		{key: "k1", fault: sim.FaultCrashAfterGuard},
		{key: "k1", fault: sim.FaultNone},
		{key: "k1", advance: lock - time.Millisecond},
		{key: "k1", advance: time.Millisecond},
		{key: "k1"},
	},
	want: map[sim.Protection]outcome{
		sim.ProtectNone:            want(4, crashed, charged, charged, charged, charged),
		sim.ProtectCheckThenInsert: want(1, crashed, charged, duplicate, duplicate, duplicate),
		sim.ProtectUnique:          want(1, crashed, charged, duplicate, duplicate, duplicate),
		sim.ProtectOnConflict:      want(1, crashed, charged, duplicate, duplicate, duplicate),
		sim.ProtectReplay:          want(1, crashed, inFlight, inFlight, charged, replayed),
		sim.ProtectSetNX:           want(0, crashed, duplicate, duplicate, duplicate, duplicate), // the lost charge
	},
}, {
	// A failure the server sees (the database refuses the payment): it
	// knows nothing was charged, so the retry with the key charges.
	name:  "a failed write, then the retry",
	steps: []step{{key: "k1", broken: true}, {key: "k1"}, {key: "k1"}},
	want: map[sim.Protection]outcome{
		sim.ProtectNone:            want(2, internal, charged, charged),
		sim.ProtectCheckThenInsert: want(1, internal, charged, duplicate),
		sim.ProtectUnique:          want(1, internal, charged, duplicate),
		sim.ProtectOnConflict:      want(1, internal, charged, duplicate),
		sim.ProtectReplay:          want(1, internal, charged, replayed),
		sim.ProtectSetNX:           want(1, internal, charged, duplicate),
	},
}}

// Each protection's rules, charged straight to the ledger (no HTTP) on a
// real database, once on each store.
func TestProtectionRules(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		b := openHouse(t, dsn(t))
		for _, tc := range rules {
			for _, p := range sim.Protections {
				t.Run(tc.name+"/"+string(p), func(t *testing.T) {
					w, ok := tc.want[p]
					if !ok {
						t.Fatalf("the table says nothing of %s", p)
					}
					got := b.play(t, b.NewLab(t, p, nil), tc.steps)
					if diff := cmp.Diff(w, got, cmp.AllowUnexported(outcome{})); diff != "" {
						t.Errorf("told and payments (-want +got):\n%s", diff)
					}
				})
			}
		}
	})
}

// play charges the lab with each step in turn and returns what the server
// told, checking on the way what every answer must carry: a replay is the
// first answer byte for byte, and a 409 says when to come back.
func (b lab) play(t *testing.T, l *labs.Lab, steps []step) outcome {
	t.Helper()
	ctx := context.Background()
	var (
		got   outcome
		first *sim.Stored
	)
	for i, st := range steps {
		b.Clock.Advance(st.advance)
		if st.fault != "" {
			if _, err := b.H.Labs.UpdateSettings(ctx, l, sim.SettingsPatch{ServerFault: &st.fault}); err != nil {
				t.Fatalf("step %d: set server_fault: %v", i+1, err)
			}
		}
		c := sim.Charge{OrderID: "order-42", Amount: 1500, Key: key(st.key)}
		if st.amount != 0 {
			c.Amount = st.amount
		}
		if st.broken {
			b.breakPayments(t)
		}
		res, err := b.H.Ledger.Charge(ctx, l, c)
		if st.broken {
			b.mendPayments(t)
		}
		got.told = append(got.told, told(res, err))
		b.check(t, i+1, l, res, err, &first)
	}
	got.payments = b.Payments(t, l)
	return got
}

// check checks what an answer carries beside its outcome.
func (b lab) check(t *testing.T, n int, l *labs.Lab, res ledger.Result, err error, first **sim.Stored) {
	t.Helper()
	switch {
	case res.Outcome == sim.OutcomeCharged:
		if res.Payment == nil {
			t.Fatalf("step %d: charged without a payment", n)
		}
		if *first == nil {
			st := api.Charged(l.ID, *res.Payment)
			*first = &st
		}
	case res.Outcome == sim.OutcomeReplayed:
		if res.Replay == nil || *first == nil {
			t.Fatalf("step %d: replayed %v, after the first answer %v", n, res.Replay, *first)
		}
		if diff := cmp.Diff(**first, *res.Replay); diff != "" {
			t.Errorf("step %d: the replay is not the first answer (-first +replay):\n%s", n, diff)
		}
	case sim.ErrorCode(err) == sim.EInFlight:
		var e *sim.Error
		if !errors.As(err, &e) || e.RetryAfter <= 0 || e.RetryAfter > lock {
			t.Errorf("step %d: in flight, Retry-After %v; want within (0, %v]", n, e, lock)
		}
	}
	if res.Outcome != sim.OutcomeCharged && res.Payment != nil {
		t.Errorf("step %d: %s with a new payment %+v", n, res.Outcome, res.Payment)
	}
}
