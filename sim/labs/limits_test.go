package labs_test

import (
	"context"
	"errors"
	"testing"

	"idemlab/sim"
	"idemlab/sim/labs"
)

// occupy is one reservation of a story: n slots in lab number lab, or the
// release of an earlier reservation.
type occupy struct {
	lab, n  int
	release int    // release the reservation of this step (1: the first), instead
	want    string // "" for granted, or the refusal's message key
}

// Simulated requests in flight: one lab gets a quarter of the server's cap
// (and never less than two races), the server its cap; past either the
// work is refused with EBusy and a Retry-After, and what is given back
// can be taken again.
func TestLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		maxInFlight int
		steps       []occupy
	}{
		{"a lab's share", 1000, []occupy{
			{lab: 0, n: 250}, {lab: 0, n: 1, want: "max-inflight-lab"}, {lab: 1, n: 250},
		}},
		{"at least two races", 400, []occupy{
			{lab: 0, n: 2 * sim.MaxRace}, {lab: 0, n: 1, want: "max-inflight-lab"},
		}},
		{"the server's cap", 200, []occupy{
			{lab: 0, n: 128}, {lab: 1, n: 72}, {lab: 2, n: 1, want: "max-inflight"},
			{lab: 1, n: 1, want: "max-inflight"},
		}},
		{"all or nothing", 1000, []occupy{
			{lab: 0, n: 200}, {lab: 0, n: 51, want: "max-inflight-lab"}, {lab: 0, n: 50},
		}},
		{"given back", 200, []occupy{
			{lab: 0, n: 128}, {lab: 1, n: 72}, {release: 1}, {lab: 2, n: 128}, {lab: 0, n: 1, want: "max-inflight"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := open(t, ":memory:", labs.Config{MaxInFlight: tc.maxInFlight})
			lim := w.r.Limits()
			ls := []*labs.Lab{w.create(t, labs.KindPrivate), w.create(t, labs.KindPrivate), w.create(t, labs.KindPrivate)}
			dones := make([]func(), len(tc.steps))
			var held int64
			for i, st := range tc.steps {
				if st.release > 0 {
					dones[st.release-1]()
					held -= int64(tc.steps[st.release-1].n)
					continue
				}
				_, done, err := lim.Occupy(context.Background(), ls[st.lab], st.n)
				got := ""
				if err == nil {
					dones[i], held = done, held+int64(st.n)
				} else {
					var e *sim.Error
					if !errors.As(err, &e) || e.Code != sim.EBusy || e.RetryAfter <= 0 || e.Limit == "" {
						t.Errorf("step %d: refused with %v; want EBusy naming its limit, with Retry-After", i+1, err)
					}
					got = e.Key
				}
				if got != st.want {
					t.Errorf("step %d: %d slots in lab %d: %q, want %q", i+1, st.n, st.lab, got, st.want)
				}
				if n := lim.InFlight(); n != held {
					t.Errorf("step %d: %d in flight, want %d", i+1, n, held)
				}
			}
		})
	}
}

// Each copy of a request turns a reserved slot into one in use, given back
// when its fate is known, which may be after the work is done; a lab with
// work reserved stays in memory.
func TestGrantUse(t *testing.T) {
	t.Parallel()
	w := open(t, ":memory:", labs.Config{MaxInFlight: 200})
	lim := w.r.Limits()
	l := w.create(t, labs.KindPrivate)
	g, done, err := lim.Occupy(context.Background(), l, 2)
	if err != nil {
		t.Fatal(err)
	}
	first, second := g.Use(), g.Use()
	if err := g.More(1); err != nil {
		t.Fatalf("one more for a retry: %v", err)
	}
	done() // the operation returns; its copies are still on their way
	if n := lim.InFlight(); n != 2 {
		t.Errorf("%d in flight after the operation, want its 2 copies", n)
	}
	first()
	second()
	if n := lim.InFlight(); n != 0 {
		t.Errorf("%d in flight after every copy came back, want 0", n)
	}
}

// The server holds at most MaxLabs labs, the shared one counted; past it a
// new lab is refused with EBusy, until one goes.
func TestMaxLabs(t *testing.T) {
	t.Parallel()
	w := open(t, ":memory:", labs.Config{MaxLabs: 3})
	ctx := context.Background()
	a := w.create(t, labs.KindPrivate)
	w.create(t, labs.KindPrivate)
	_, err := w.r.Create(ctx, labs.KindPrivate, sim.DefaultSettings())
	var e *sim.Error
	if !errors.As(err, &e) || e.Code != sim.EBusy || e.Limit != "max-labs" {
		t.Fatalf("a lab past the limit: %v, want EBusy max-labs", err)
	}
	if err := w.r.Delete(ctx, a.ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := w.r.Create(ctx, labs.KindPrivate, sim.DefaultSettings()); err != nil {
		t.Errorf("a lab after one went: %v", err)
	}
	if err := w.r.Delete(ctx, sim.DemoLab); sim.ErrorCode(err) != sim.EForbidden {
		t.Errorf("delete the shared lab: %v, want %s", err, sim.EForbidden)
	}
}
