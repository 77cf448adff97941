package labs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"idemlab/sim"
	"idemlab/sim/labs"
)

// refusedWith checks that err is a refusal of the code, naming the limit,
// with a Retry-After.
func refusedWith(t *testing.T, err error, code sim.Code, limit string) {
	t.Helper()
	var e *sim.Error
	if !errors.As(err, &e) || e.Code != code || e.Limit != limit || e.RetryAfter <= 0 {
		t.Errorf("refused with %v; want %s %s with a Retry-After", err, code, limit)
	}
}

// One client address holds at most a quarter of the requests in flight,
// across its labs; another address, and work of no address, have their
// own; the server's cap comes first; what is given back can be taken again,
// and an address holding nothing is forgotten.
func TestInFlightShares(t *testing.T) {
	t.Parallel()
	w := open(t, ":memory:", labs.Config{MaxInFlight: 1000})
	lim := w.r.Limits()
	bg := context.Background()
	a, b, c := labs.WithClient(bg, "192.0.2.1"), labs.WithClient(bg, "192.0.2.2"), labs.WithClient(bg, "192.0.2.3")
	ls := []*labs.Lab{w.create(t, labs.KindPrivate), w.create(t, labs.KindPrivate), w.create(t, labs.KindPrivate), w.create(t, labs.KindPrivate)}
	occupy := func(ctx context.Context, l *labs.Lab, n int) (*labs.Grant, func()) {
		t.Helper()
		g, done, err := lim.Occupy(ctx, l, n)
		if err != nil {
			t.Fatalf("%d slots for %q: %v", n, labs.ClientOf(ctx), err)
		}
		return g, done
	}
	ga, doneA := occupy(a, ls[0], 200)
	_, doneA2 := occupy(a, ls[1], 50)
	_, _, err := lim.Occupy(a, ls[2], 1)
	refusedWith(t, err, sim.ELimited, "inflight-per-address")
	refusedWith(t, ga.More(1), sim.ELimited, "inflight-per-address") // a retry of a's, too
	_, doneB := occupy(b, ls[1], 200)
	_, doneNone := occupy(bg, ls[2], 250)
	occupy(c, ls[3], 250)
	if n := lim.InFlight(); n != 950 {
		t.Fatalf("%d in flight, want 950", n)
	}
	_, _, err = lim.Occupy(b, ls[0], 51) // b has room, the server has not
	refusedWith(t, err, sim.EBusy, "max-inflight")
	if n := lim.InFlight(); n != 950 {
		t.Errorf("%d in flight after the refusals, want 950: a refusal took slots", n)
	}
	doneA2()
	occupy(a, ls[0], 50)
	if n := lim.Clients(); n != 3 {
		t.Errorf("%d addresses hold slots, want 3", n)
	}
	doneA()
	doneB()
	doneNone()
	if n := lim.Clients(); n != 2 { // a still holds its 50, c its 250
		t.Errorf("%d addresses hold slots after b gave all back, want 2", n)
	}
}

// A copy of a request past what was reserved (a bug, never a lost slot)
// counts for its address too, and is given back.
func TestInFlightShareOfACopy(t *testing.T) {
	t.Parallel()
	w := open(t, ":memory:", labs.Config{MaxInFlight: 1000})
	lim := w.r.Limits()
	a := labs.WithClient(context.Background(), "192.0.2.1")
	g, done, err := lim.Occupy(a, w.create(t, labs.KindPrivate), 1)
	if err != nil {
		t.Fatal(err)
	}
	first, extra := g.Use(), g.Use()
	done()
	first()
	if n := lim.Clients(); n != 1 {
		t.Errorf("%d addresses hold slots with a copy on its way, want 1", n)
	}
	extra()
	if n, c := lim.InFlight(), lim.Clients(); n != 0 || c != 0 {
		t.Errorf("%d in flight for %d addresses after every copy came back, want none", n, c)
	}
}

// One client address holds a bounded number of labs, of those it made that
// still exist: private ones and scenario links' being built; a comparison's
// labs, and labs made for no address, are not counted. The database keeps
// who made a lab as a keyed hash, never the address.
func TestLabShares(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		w := open(t, dsn(t), labs.Config{LabsPerAddress: 2})
		bg := context.Background()
		a, b := labs.WithClient(bg, "192.0.2.1"), labs.WithClient(bg, "2001:db8:1:2::/64")
		create := func(ctx context.Context, kind string) (*labs.Lab, error) {
			return w.r.Create(ctx, kind, sim.DefaultSettings())
		}
		first, err := create(a, labs.KindPrivate)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := create(a, labs.KindBuilding); err != nil {
			t.Fatal(err)
		}
		n := w.r.Count()
		for _, kind := range []string{labs.KindPrivate, labs.KindBuilding} {
			_, err := create(a, kind)
			refusedWith(t, err, sim.ELimited, "labs-per-address")
		}
		if w.r.Count() != n {
			t.Errorf("labs counted %d → %d after refusals", n, w.r.Count())
		}
		for _, c := range []struct {
			ctx  context.Context
			kind string
		}{{a, labs.KindCompare}, {b, labs.KindPrivate}, {b, labs.KindBuilding}, {bg, labs.KindPrivate}, {bg, labs.KindPrivate}, {bg, labs.KindPrivate}} {
			if _, err := create(c.ctx, c.kind); err != nil {
				t.Errorf("%q, %s: %v", labs.ClientOf(c.ctx), c.kind, err)
			}
		}
		if err := w.r.Delete(bg, first.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := create(a, labs.KindPrivate); err != nil {
			t.Errorf("a lab after one of the address's went: %v", err)
		}

		rows, err := w.r.Config().Store.Query(bg, `SELECT COALESCE(owner, ''), COUNT(*) FROM labs GROUP BY owner`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		counts := map[int]int{}
		for rows.Next() {
			var owner string
			var n int
			if err := rows.Scan(&owner, &n); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(owner, "192.0.2") || strings.Contains(owner, "2001:db8") {
				t.Errorf("an owner keeps the address: %q", owner)
			}
			if owner != "" {
				counts[n]++
			}
		}
		// a: two labs of its share and a comparison's; b: two
		if counts[3] != 1 || counts[2] != 1 || len(counts) != 2 {
			t.Errorf("labs per owner %v, want one owner of 3 and one of 2", counts)
		}
	})
}

// A lab held (a page open on it, work running) is in use: it is not
// removed as idle, and the database says it was used at the last sweep,
// for every process that may expire it. Let go, it idles out.
func TestHeldLabIsInUse(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, dsn func(testing.TB) string) {
		const idle = time.Hour
		w := open(t, dsn(t), labs.Config{LabIdle: idle})
		ctx := context.Background()
		l := w.create(t, labs.KindPrivate)
		release := l.Hold()
		w.clock.Advance(3 * idle)
		w.sweep(t)
		if _, err := w.r.Lab(ctx, l.ID); err != nil {
			t.Fatalf("a held lab after three idle times: %v", err)
		}
		var touched int64
		if err := w.r.Config().Store.QueryRow(ctx, `SELECT touched_at FROM labs WHERE id = ?`, l.ID).Scan(&touched); err != nil {
			t.Fatal(err)
		}
		if want := w.clock.Now().UnixMilli(); touched != want {
			t.Errorf("touched_at %d, want the sweep's %d", touched, want)
		}
		release()
		w.clock.Advance(idle + time.Second)
		w.sweep(t)
		if _, err := w.r.Lab(ctx, l.ID); sim.ErrorCode(err) != sim.ENotFound {
			t.Errorf("the lab let go, after its idle time: %v, want %s", err, sim.ENotFound)
		}
	})
}
