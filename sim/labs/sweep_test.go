package labs_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"idemlab/sim"
	"idemlab/sim/labs"
)

// A lab untouched for LabIdle is removed with everything in it at the next
// sweep, by the clock; one used meanwhile, or with work running, is kept,
// and so are the shared lab and a scenario's lab still being built.
func TestIdleExpiry(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		const idle = time.Hour
		w := open(t, dsn(t), labs.Config{LabIdle: idle})
		ctx := context.Background()
		rows := []struct {
			name        string
			kind        string
			hold, touch bool // work runs in it all along; it is used just before the sweep
			kept        bool
		}{
			{name: "untouched", kind: labs.KindPrivate},
			{name: "a comparison's, untouched", kind: labs.KindCompare},
			{name: "used lately", kind: labs.KindPrivate, touch: true, kept: true},
			{name: "with work running", kind: labs.KindPrivate, hold: true, kept: true},
			{name: "being built", kind: labs.KindBuilding, kept: true},
		}
		made := make([]*labs.Lab, len(rows))
		for i, tc := range rows {
			made[i] = w.create(t, tc.kind)
			if tc.hold {
				defer made[i].Hold()()
			}
		}
		w.clock.Advance(idle - time.Second)
		w.sweep(t)
		if n := w.r.Count(); n != int64(len(rows))+1 {
			t.Fatalf("%d labs before their idle time, want %d", n, len(rows)+1)
		}
		w.clock.Advance(2 * time.Second)
		for i, tc := range rows {
			if tc.touch {
				if _, err := w.r.Lab(ctx, made[i].ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		w.room.take()
		w.sweep(t)
		var removed []closed
		for i, tc := range rows {
			t.Run(tc.name, func(t *testing.T) {
				_, err := w.r.Lab(ctx, made[i].ID)
				if got := err == nil; got != tc.kept {
					t.Errorf("kept %v (%v), want %v", got, err, tc.kept)
				}
				if !tc.kept {
					if sim.ErrorCode(err) != sim.ENotFound {
						t.Errorf("a removed lab: %v, want %s", err, sim.ENotFound)
					}
					removed = append(removed, closed{made[i].ID, labs.Removed})
				}
			})
		}
		if _, err := w.r.Lab(ctx, sim.DemoLab); err != nil {
			t.Errorf("the shared lab: %v", err)
		}
		byLab := cmpopts.SortSlices(func(a, b closed) bool { return a.Lab < b.Lab })
		if diff := cmp.Diff(removed, w.room.take(), byLab); diff != "" {
			t.Errorf("rooms told to let go (-want +got):\n%s", diff)
		}
		if got, want := w.r.Count(), int64(len(rows)+1-len(removed)); got != want {
			t.Errorf("%d labs counted, want %d", got, want)
		}
	})
}

// A lab unused for ten minutes leaves memory (its rooms let go of it) but
// not the database: the next use loads it again, as it was. One in use
// stays.
func TestEviction(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		w := open(t, dsn(t), labs.Config{})
		ctx := context.Background()
		idle, used, busy := w.create(t, labs.KindPrivate), w.create(t, labs.KindPrivate), w.create(t, labs.KindPrivate)
		release := busy.Hold()
		defer release()
		w.clock.Advance(9 * time.Minute)
		w.sweep(t)
		if n := w.r.InMemory(); n != 3 {
			t.Fatalf("%d labs in memory before ten minutes, want 3", n)
		}
		w.clock.Advance(2 * time.Minute)
		if _, err := w.r.Lab(ctx, used.ID); err != nil {
			t.Fatal(err)
		}
		w.room.take()
		w.sweep(t)
		if diff := cmp.Diff([]closed{{idle.ID, labs.Evicted}}, w.room.take()); diff != "" {
			t.Errorf("rooms told to let go (-want +got):\n%s", diff)
		}
		if n := w.r.InMemory(); n != 2 {
			t.Errorf("%d labs in memory, want 2", n)
		}
		again, err := w.r.Lab(ctx, idle.ID)
		if err != nil {
			t.Fatalf("the evicted lab: %v", err)
		}
		if again == idle {
			t.Error("the evicted lab was still the one in memory")
		}
		if diff := cmp.Diff(idle.Settings(), again.Settings()); diff != "" {
			t.Errorf("the evicted lab's settings, loaded again (-before +after):\n%s", diff)
		}
		if n := w.r.InMemory(); n != 3 || w.r.Count() != 4 || slices.Contains(w.room.take(), closed{idle.ID, labs.Removed}) {
			t.Errorf("%d labs in memory, %d counted; want 3 and 4, none removed", n, w.r.Count())
		}
	})
}
