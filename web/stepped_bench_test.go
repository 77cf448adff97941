package web_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"idemlab/sim"
)

// BenchmarkSteppedPause is SPEC's promise that a stepped race never holds
// a lock another lab needs, measured on SQLite: new charges in lab Y
// (replay, a fresh Idempotency-Key each) and their live updates (from the
// POST until Y's open page has the new total), while lab X is idle and
// while X holds a stepped race of two racers under check-then-insert, both
// past their SELECT and standing before their INSERT. Idle and paused
// phases alternate, round after round, on one server, and X's page is open
// throughout, as a person stepping the race would have it; each paused
// phase starts its own race and ends it with DELETE. The paused phases add
// up to 30 s (6 s under -short), after an idle warm-up of half that.
// Reported: the medians of each, and paused ÷ idle (the bound: no
// slower than idle). A live update that takes over 10 s is counted as
// 10 s, and in "late".
//
//	go test -run '^$' -bench SteppedPause -benchtime 1x ./web/
func BenchmarkSteppedPause(b *testing.B) {
	s := startServer(b, withDB(filepath.Join(b.TempDir(), "lab.db")))
	x := s.newLab(`{"protection":"check-then-insert","key_strategy":"uuid"}`)
	y := s.newLab(`{"protection":"replay","key_strategy":"uuid"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchLab(b, ctx, s, x, 1) // the page the race is stepped from
	m := &spMeter{s: s, lab: y, w: watchLab(b, ctx, s, y, 1)}

	const rounds = 6
	window := 30 * time.Second
	if testing.Short() {
		window = 6 * time.Second
	}
	phase := window / rounds
	var idle, paused spSamples
	var held time.Duration
	// Outside the figures: the server's first seconds. Live updates 5–15 s
	// in ran 1–2 ms slower than later ones, with or without a race.
	m.phase("warm-up", window/2)
	for b.Loop() {
		for r := range rounds {
			pausedPhase := func() {
				race := spPause(b, s, x, fmt.Sprintf("order-%d", r))
				paused.add(m.phase(fmt.Sprintf("round %d, paused", r), phase))
				held += race.abort()
			}
			if r%2 == 0 { // which goes first alternates, as do the transitions
				idle.add(m.phase(fmt.Sprintf("round %d, idle", r), phase))
				pausedPhase()
			} else {
				pausedPhase()
				idle.add(m.phase(fmt.Sprintf("round %d, idle", r), phase))
			}
		}
	}
	if n := s.ledger(x).Count; n != 0 {
		b.Errorf("lab X holds %d payments after its aborted races, want 0", n)
	}
	b.ReportMetric(ms(median(idle.charge)), "charge-ms-idle")
	b.ReportMetric(ms(median(paused.charge)), "charge-ms-paused")
	b.ReportMetric(float64(median(paused.charge))/float64(median(idle.charge)), "charge-ratio")
	b.ReportMetric(ms(median(idle.live)), "live-ms-idle")
	b.ReportMetric(ms(median(paused.live)), "live-ms-paused")
	b.ReportMetric(float64(median(paused.live))/float64(median(idle.live)), "live-ratio")
	b.ReportMetric(float64(spP90(paused.charge))/float64(spP90(idle.charge)), "charge-p90-ratio")
	b.ReportMetric(float64(spP90(paused.live))/float64(spP90(idle.live)), "live-p90-ratio")
	b.ReportMetric(float64(len(idle.live)), "samples-idle")
	b.ReportMetric(float64(len(paused.live)), "samples-paused")
	b.ReportMetric(held.Seconds(), "paused-s")
	b.ReportMetric(float64(m.late), "late")
}

// spSamples are a condition's samples: each charge's answer and its live
// update, from the moment the charge was sent.
type spSamples struct{ charge, live []time.Duration }

func (a *spSamples) add(o spSamples) {
	a.charge = append(a.charge, o.charge...)
	a.live = append(a.live, o.live...)
}

// spMeter charges lab Y and times the charge and its live update.
type spMeter struct {
	s     *testServer
	lab   string
	w     *watch
	count int64 // the charges Y has made: its page's total
	n     int   // the orders charged
	late  int   // live updates counted as spCensor
}

// spCensor is the longest a live update is waited for.
const spCensor = 10 * time.Second

// sample charges a new order with a fresh key and waits for Y's page to
// show it.
func (m *spMeter) sample() (charge, live time.Duration) {
	m.n++
	start := time.Now()
	m.s.must(http.StatusCreated, "POST", m.lab+"/charges", fmt.Sprintf(`{"order_id":"o-%d","amount":1500}`, m.n),
		"Idempotency-Key", uuid.NewString())
	charge = time.Since(start)
	m.count++
	if !m.w.waitFor(m.count, spCensor) {
		m.late++
		return charge, spCensor
	}
	return charge, time.Since(start)
}

// phase takes samples one after another for d, after one left out: the
// first after a change of condition. Under -v it logs the phase's figures.
func (m *spMeter) phase(name string, d time.Duration) spSamples {
	m.sample()
	var out spSamples
	for start := time.Now(); time.Since(start) < d; {
		c, l := m.sample()
		out.charge = append(out.charge, c)
		out.live = append(out.live, l)
	}
	if !testing.Verbose() {
		return out
	}
	m.s.tb.Logf("%s: %d samples; charge p50 %v, p90 %v; live p50 %v, p90 %v", name, len(out.live),
		median(out.charge).Round(time.Microsecond), spP90(out.charge).Round(time.Microsecond),
		median(out.live).Round(10*time.Microsecond), spP90(out.live).Round(10*time.Microsecond))
	return out
}

// spRace is a stepped race held paused in lab X.
type spRace struct {
	tb     testing.TB
	st     *stepper
	paused time.Time
}

// spPause starts a stepped race of two racers in lab x and steps A, then
// B, once each: both have run their SELECT (found nothing) and stand
// before their INSERT.
func spPause(tb testing.TB, s *testServer, x, order string) *spRace {
	tb.Helper()
	r := &spRace{tb: tb, st: s.stepped(x, order, 2).step("A", "B")}
	r.standing()
	r.paused = time.Now()
	return r
}

// standing fails unless both racers stand before their INSERT, having
// found nothing with their SELECT.
func (r *spRace) standing() {
	r.tb.Helper()
	st := r.st
	for _, name := range []string{"A", "B"} {
		v := st.racer(name)
		if v.State != sim.RacerReady || v.Next != sim.PointInsert {
			r.tb.Fatalf("racer %s is %s before %q, want ready before %q\n%+v", name, v.State, v.Next, sim.PointInsert, st.race)
		}
		if got := st.results(name, sim.PointSelect); len(got) != 1 || got[0] != sim.StepFound || st.rows(name) != 0 {
			r.tb.Fatalf("racer %s's SELECT: %v (%d rows), want found 0\n%+v", name, got, st.rows(name), st.race.Log)
		}
		if got := st.results(name, sim.PointInsert); len(got) != 0 {
			r.tb.Fatalf("racer %s ran its INSERT while paused: %v", name, got)
		}
	}
}

// abort checks that the race stood paused all along (GET), aborts it
// (DELETE), checks that it is over, and returns how long it stood.
func (r *spRace) abort() time.Duration {
	r.tb.Helper()
	held := time.Since(r.paused)
	st := r.st
	path := st.prefix + "/stepped-races/" + st.race.ID
	st.read(st.s.must(http.StatusOK, "GET", path, ""))
	r.standing()
	st.read(st.s.must(http.StatusOK, "DELETE", path, ""))
	if !st.race.Over || st.race.Aborted != sim.AbortAsked {
		r.tb.Fatalf("after DELETE the race is over=%v, aborted %q; want over, %q\n%+v",
			st.race.Over, st.race.Aborted, sim.AbortAsked, st.race)
	}
	for _, v := range st.race.Racers {
		if v.State != sim.RacerDone {
			r.tb.Fatalf("after DELETE racer %s is %s, want %s", v.Name, v.State, sim.RacerDone)
		}
	}
	return held
}

// spP90 is the 90th percentile of ds.
func spP90(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)*9/10]
}
