package idempotency_test

import (
	"context"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/idempotency"
	"idemlab/sim/store"
)

// A reset starts a lab's keys afresh: a stored answer from before it is
// never replayed after it, even one that a request read before the reset
// and put in the cache after it (the reset generation, not only the
// cache's forgetting, keeps it out).
func TestResetGeneration(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		b := openHouse(t, dsn(t))
		for _, tc := range []struct {
			name        string
			reset, late bool
			told        string
			payments    int
		}{
			{name: "no reset", told: "replayed", payments: 1},
			{name: "no reset, a late remember", late: true, told: "replayed", payments: 1},
			{name: "reset", reset: true, told: "charged", payments: 1},
			{name: "reset, then an old answer remembered", reset: true, late: true, told: "charged", payments: 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				l := b.NewLab(t, sim.ProtectReplay, nil)
				c := sim.Charge{OrderID: "order-42", Amount: 1500, Key: key("k1")}
				if res, err := b.H.Ledger.Charge(ctx, l, c); told(res, err) != "charged" {
					t.Fatalf("the first charge was told %s", told(res, err))
				}
				// A request reads the finished record, in the writer's
				// transaction; it keeps it in the cache only later.
				s := l.Settings()
				late := b.H.Records.New(l, idempotency.ScopeCharges, *c.Key, time.Duration(s.KeyTTLS)*time.Second, l.Clock())
				err := b.H.Store.Write(ctx, func(tx *store.Tx) error {
					return late.Take(tx, c.Fingerprint(), time.Duration(s.LockTimeoutMS)*time.Millisecond)
				})
				if err != nil || late.Replay == nil {
					t.Fatalf("the late request: %v, replay %v; want the stored answer", err, late.Replay)
				}
				if tc.reset {
					if err := b.H.Labs.Reset(ctx, l); err != nil {
						t.Fatalf("reset: %v", err)
					}
				}
				if tc.late {
					late.Remember()
				}
				res, err := b.H.Ledger.Charge(ctx, l, c)
				if got := told(res, err); got != tc.told {
					t.Errorf("the charge after it was told %s, want %s", got, tc.told)
				}
				if got := b.Payments(t, l); got != tc.payments {
					t.Errorf("%d payments, want %d", got, tc.payments)
				}
			})
		}
	})
}

// Moving the lab's clock moves the expiry of its keys, in the database
// (replay's records, their TTL and their lock) and in the key-value store
// (set-nx) alike: a retry after the key expired is a new charge.
func TestClockMovesExpiry(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		b := openHouse(t, dsn(t))
		for _, tc := range []struct {
			p       sim.Protection
			crash   bool  // the first charge dies after its guard
			advance int64 // seconds; key_ttl_s is 60, lock_timeout_ms 5000
			told    string
		}{
			{p: sim.ProtectReplay, told: "replayed"},
			{p: sim.ProtectReplay, advance: 30, told: "replayed"},
			{p: sim.ProtectReplay, advance: 60, told: "charged"},
			{p: sim.ProtectReplay, advance: 120, told: "charged"},
			{p: sim.ProtectReplay, crash: true, told: "in-flight"},
			{p: sim.ProtectReplay, crash: true, advance: 4, told: "in-flight"},
			{p: sim.ProtectReplay, crash: true, advance: 5, told: "charged"},
			{p: sim.ProtectSetNX, told: "duplicate"},
			{p: sim.ProtectSetNX, advance: 30, told: "duplicate"},
			{p: sim.ProtectSetNX, advance: 60, told: "charged"},
			{p: sim.ProtectSetNX, advance: 120, told: "charged"},
			{p: sim.ProtectSetNX, crash: true, advance: 30, told: "duplicate"},
			{p: sim.ProtectSetNX, crash: true, advance: 60, told: "charged"},
		} {
			name := string(tc.p) + map[bool]string{true: "/crashed", false: ""}[tc.crash] + "/" + time.Duration(tc.advance*int64(time.Second)).String()
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				l := b.NewLab(t, tc.p, func(s *sim.Settings) {
					s.KeyTTLS = 60
					if tc.crash {
						s.ServerFault = sim.FaultCrashAfterGuard
					}
				})
				c := sim.Charge{OrderID: "order-42", Amount: 1500, Key: key("k1")}
				want := map[bool]string{true: "crashed", false: "charged"}[tc.crash]
				if res, err := b.H.Ledger.Charge(ctx, l, c); told(res, err) != want {
					t.Fatalf("the first charge was told %s, want %s", told(res, err), want)
				}
				none := sim.FaultNone
				if _, err := b.H.Labs.UpdateSettings(ctx, l, sim.SettingsPatch{ServerFault: &none}); err != nil {
					t.Fatal(err)
				}
				if tc.advance > 0 {
					now, err := b.H.Keys.Advance(ctx, l, tc.advance)
					if err != nil {
						t.Fatalf("advance: %v", err)
					}
					if want := b.H.Clock.Now().Add(time.Duration(tc.advance) * time.Second); !now.Equal(want) {
						t.Errorf("the lab's clock reads %v, want %v", now, want)
					}
				}
				res, err := b.H.Ledger.Charge(ctx, l, c)
				if got := told(res, err); got != tc.told {
					t.Errorf("the retry was told %s, want %s", got, tc.told)
				}
			})
		}
	})
}

// The lab's clock moves only forward, by at most a year at a time.
func TestAdvanceRange(t *testing.T) {
	t.Parallel()
	b := openHouse(t, ":memory:")
	l := b.NewLab(t, sim.ProtectReplay, nil)
	for _, s := range []int64{-1, 0, sim.MaxClockAdvance + 1} {
		if _, err := b.H.Keys.Advance(context.Background(), l, s); sim.ErrorCode(err) != sim.EInvalid {
			t.Errorf("advance %d s: %v, want %s", s, err, sim.EInvalid)
		}
	}
	if got := b.H.Keys.Now(l); !got.Equal(b.H.Clock.Now()) {
		t.Errorf("the lab's clock moved to %v; want it where it was, %v", got, b.H.Clock.Now())
	}
}
