package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	herd "idemlab/sim/client/storm"
)

// runStorm starts a storm in the lab and waits for its end.
func runStorm(t *testing.T, s *testServer, prefix, body string) herd.View {
	t.Helper()
	r := s.must(http.StatusCreated, "POST", prefix+"/storms", body)
	var v herd.View
	if err := json.Unmarshal(r.Body, &v); err != nil || v.ID == "" || r.Header.Get("Location") != prefix+"/storms/"+v.ID {
		t.Fatalf("storm started: %v %s, Location %q", err, r.Body, r.Header.Get("Location"))
	}
	if !poll(60*time.Second, func() bool {
		json.Unmarshal(s.must(http.StatusOK, "GET", prefix+"/storms/"+v.ID, "").Body, &v)
		return v.State == "done"
	}) {
		t.Fatalf("storm %s still %s", v.ID, v.State)
	}
	return v
}

// seeds is how many seeded runs each of the storm lessons' mechanisms is
// checked over (issue: "each over five seeded runs").
const seeds = 5

// stormRun is a storm run to its end, and its lab.
type stormRun struct {
	Prefix string
	herd.View
}

// seeded runs, for each seed 1…seeds, a storm of each variant, in a new
// lab of those settings, the storms of together seeds at a time (more at
// once starve the suite's browsers on two cores, and blur the spikes), the
// next starting as soon as one ends; what each run gives, by variant, in
// seed order.
func seeded(t *testing.T, s *testServer, together int, variants []string, settings func(variant string) string, body func(variant string) string) map[string][]stormRun {
	t.Helper()
	runs := map[string][]stormRun{}
	for _, v := range variants {
		runs[v] = make([]stormRun, seeds)
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, together*len(variants))
	for seed := 1; seed <= seeds; seed++ {
		for _, variant := range variants {
			slots <- struct{}{}
			prefix := s.newLab(fmt.Sprintf(`{"seed":%d,%s}`, seed, settings(variant)))
			wg.Go(func() {
				defer func() { <-slots }()
				runs[variant][seed-1] = stormRun{prefix, runStorm(t, s, prefix, body(variant))}
			})
		}
	}
	wg.Wait()
	return runs
}

// sum adds up one count of a storm's series.
func sum(v herd.View, count func(herd.Bucket) int) (n int) {
	for _, b := range v.Series {
		n += count(b)
	}
	return n
}

// Lesson 15c's mechanism, through the API, over five seeds: clients whose
// answers are lost a fifth of the time retry; without keys some orders are
// charged twice, with them none. The series' counts add up to the
// summary's, and what the ledger holds is what the storm says.
func TestStormKeysMakeItSafe(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	runs := seeded(t, s, 1, []string{"false", "true"},
		func(string) string {
			return `"protection":"unique","retry":{"mode":"auto","max_attempts":4,"base_ms":20,"cap_ms":100}`
		},
		func(key string) string {
			return `{"clients":40,"duration_s":2,"key":` + key + `,"fates":{"response-lost":0.2}}`
		})
	for key, vs := range runs {
		for seed, r := range vs {
			v, sm := r.View, r.Summary
			first, retries := sum(v, func(b herd.Bucket) int { return b.First }), sum(v, func(b herd.Bucket) int { return b.Retries })
			if first != sm.Operations || first+retries != sm.Attempts || sm.Operations < 40 || retries == 0 {
				t.Errorf("key %s, seed %d: %d first tries and %d retries in the series, summary %+v", key, seed+1, first, retries, sm)
			}
			if got := sum(v, func(b herd.Bucket) int { return b.Doubles }); got != sm.DoubleCharges {
				t.Errorf("key %s, seed %d: %d double charges in the series, %d in the summary", key, seed+1, got, sm.DoubleCharges)
			}
			switch {
			case key == "true" && sm.DoubleCharges != 0:
				t.Errorf("with keys, seed %d: %d double charges, want 0", seed+1, sm.DoubleCharges)
			case key == "false" && sm.DoubleCharges == 0:
				t.Errorf("without keys, a fifth of the answers lost, seed %d: no double charge (%+v)", seed+1, sm)
			case key == "true" && sum(v, func(b herd.Bucket) int { return b.DupStopped }) == 0:
				t.Errorf("with keys, seed %d: no retry was stopped by its key", seed+1)
			}
		}
	}
	for seed := range seeds {
		t.Logf("seed %d: %d double charges without keys, %d with", seed+1, runs["false"][seed].Summary.DoubleCharges, runs["true"][seed].Summary.DoubleCharges)
	}
	v := runs["true"][0]
	if csv := s.must(http.StatusOK, "GET", v.Prefix+"/storms/"+v.ID+"/series.csv", ""); !strings.HasPrefix(string(csv.Body), "t_ms,first_tries,retries,") ||
		strings.Count(string(csv.Body), "\n") != len(v.Series)+1 {
		t.Errorf("the series as CSV: %.200s", csv.Body)
	}
}

// A storm's request is bounded and checked field by field, and a lab runs
// one storm at a time.
func TestStormRequestsAreBounded(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := s.newLab(`{"protection":"replay"}`)
	r := s.do("POST", prefix+"/storms", `{"clients":2001,"duration_s":0,"outage":{"at_s":-1,"for_s":0},"fates":{"response-lost":2}}`)
	for _, field := range []string{"clients", "duration_s", "outage.at_s", "outage.for_s", "fates.response-lost"} {
		checkProblem(t, r, http.StatusBadRequest, "/problems/validation-error", field)
	}
	s.must(http.StatusCreated, "POST", prefix+"/storms", `{"clients":5,"duration_s":3}`)
	if r := s.do("POST", prefix+"/storms", `{"clients":5,"duration_s":1}`); r.Status != http.StatusConflict {
		t.Errorf("a second storm in the lab: %d, want 409", r.Status)
	}
	if r := s.do("GET", prefix+"/storms/nope", ""); r.Status != http.StatusNotFound {
		t.Errorf("an unknown storm: %d, want 404", r.Status)
	}
}

// A storm stopped through the API ends at once and keeps what it counted;
// stopping it again changes nothing, and the lab then takes another.
func TestStormStops(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := s.newLab(`{"protection":"replay"}`)
	var v herd.View
	json.Unmarshal(s.must(http.StatusCreated, "POST", prefix+"/storms", `{"clients":10,"duration_s":60,"key":true}`).Body, &v)
	id := v.ID
	if !poll(10*time.Second, func() bool {
		json.Unmarshal(s.must(http.StatusOK, "GET", prefix+"/storms/"+id, "").Body, &v)
		return v.Summary.Operations >= 10
	}) {
		t.Fatalf("the first burst: %+v", v.Summary)
	}
	s.must(http.StatusNoContent, "DELETE", prefix+"/storms/"+id, "")
	json.Unmarshal(s.must(http.StatusOK, "GET", prefix+"/storms/"+id, "").Body, &v)
	stopped := v.Summary
	if v.State != "done" || stopped.Operations < 10 {
		t.Errorf("after DELETE: %s, %+v; want done, the first burst's operations kept", v.State, stopped)
	}
	s.must(http.StatusNoContent, "DELETE", prefix+"/storms/"+id, "")
	json.Unmarshal(s.must(http.StatusOK, "GET", prefix+"/storms/"+id, "").Body, &v)
	if v.Summary != stopped {
		t.Errorf("a stopped storm went on: %+v, then %+v", stopped, v.Summary)
	}
	if r := s.do("DELETE", prefix+"/storms/nope", ""); r.Status != http.StatusNotFound {
		t.Errorf("stopping an unknown storm: %d, want 404", r.Status)
	}
	s.must(http.StatusCreated, "POST", prefix+"/storms", `{"clients":1,"duration_s":1}`)
}

// Lesson 15b's mechanism, through the API, over five seeds: a server whose
// capacity is far below its clients' load refuses most attempts; without a
// budget every refusal is retried up to the policy's attempts, and the load
// multiplies; with a ratio budget of 10 % the clients retry at most a tenth
// of their first tries, and the load stays near what they asked.
func TestStormBudgetStopsTheAmplification(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	runs := seeded(t, s, 1, []string{"none", "ratio", "token-bucket"},
		func(budget string) string {
			return `"protection":"unique","capacity_rps":20,
"retry":{"mode":"auto","max_attempts":5,"base_ms":50,"cap_ms":200,"respect_retry_after":false,"budget":"` + budget + `","budget_percent":10}`
		},
		func(string) string { return `{"clients":100,"duration_s":1,"key":true}` })
	for seed := range seeds {
		none, ratio := runs["none"][seed], runs["ratio"][seed]
		for budget, r := range map[string]stormRun{"none": none, "ratio": ratio} {
			if sum(r.View, func(b herd.Bucket) int { return b.Busy }) == 0 {
				t.Errorf("seed %d, budget %s: no attempt refused past the capacity", seed+1, budget)
			}
		}
		if a, b := none.Summary.Amplification, ratio.Summary.Amplification; b > 1.1+0.02 || a < 2 {
			t.Errorf("seed %d, amplification: %.2f without a budget, %.2f with a 10%% ratio; want at least 2, and at most 1.1 + 0.02", seed+1, a, b)
		}
		// a client's token bucket (10 tokens, retries while more than 5 are
		// left, a tenth of one back for each answer that needs none) lasts
		// over all its operations: its 100 clients retry at most 6 times
		// each in all, whatever the load; one made afresh for each
		// operation would let every operation retry 4 times
		tb := runs["token-bucket"][seed].Summary
		if retries := tb.Attempts - tb.Operations; retries > 100*6 {
			t.Errorf("seed %d: %d retries with a token bucket per client; want at most 600 (100 clients, 5 each and the tokens given back)", seed+1, retries)
		}
		bucket := tb.Amplification
		t.Logf("seed %d: amplification %.2f without a budget, %.2f with a 10%% ratio, %.2f with a token bucket", seed+1, none.Summary.Amplification, ratio.Summary.Amplification, bucket)
	}
}

// A reset stops the lab's storm and waits for its clients before it
// empties the lab: the storm ends at once, nothing of it lands in the lab
// afterwards, and the lab's storms are gone with its payments.
func TestResetStopsTheStorm(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := s.newLab(`{"protection":"none"}`)
	var v herd.View
	json.Unmarshal(s.must(http.StatusCreated, "POST", prefix+"/storms", `{"clients":20,"duration_s":30}`).Body, &v)
	if !poll(10*time.Second, func() bool { return s.ledger(prefix).Count > 0 }) {
		t.Fatal("the storm charged nothing")
	}
	s.must(http.StatusNoContent, "POST", prefix+"/reset", "")
	if r := s.do("GET", prefix+"/storms/"+v.ID, ""); r.Status != http.StatusNotFound {
		t.Errorf("the storm after the reset: %d %s, want 404", r.Status, r.Body)
	}
	if n := s.ledger(prefix).Count; n != 0 {
		t.Errorf("the ledger after the reset holds %d payments, want 0", n)
	}
	s.must(http.StatusCreated, "POST", prefix+"/storms", `{"clients":1,"duration_s":1}`) // none runs: 409 otherwise
}

// Lesson 15's mechanism, through the API, over five seeds: the clients'
// first operations go at once, past a capacity far below them, and the
// server is down for a while. Without jitter the refused and failed
// attempts come back together, in spikes; with full jitter they spread.
// After the outage, the peaks of retries in a tenth of a second add up over
// the seeds to at least three times more without jitter (each seed's at
// least twice), and the backlog takes longer to clear: the spikes meet a
// full server, and their refused part waits out a whole backoff more.
//
// Not parallel: the spikes are a matter of when the clients' timers fire,
// and on two cores shared with the other tests they fire late and spread
// (a peak of 45 against 20 was seen so). Run alone, before the parallel
// tests, it measures the mechanism, not the machine's load. Three seeds
// at a time (six storms) end in 10 s instead of two's 14 s and keep the
// spikes: over six runs, peaks of 55–152 without jitter against 9–17
// with it, 3.9× at the least (two at a time: 72–147 against 11–16). One
// seed's ratio is noisier than their sum: a CI run on PostgreSQL saw one
// seed at 58 against 20 (2.9×) while the five added up to 471 against 65.
func TestStormJitterSpreadsTheHerd(t *testing.T) {
	s := startServer(t)
	runs := seeded(t, s, 3, []string{"none", "full"},
		func(jitter string) string {
			return `"protection":"replay","capacity_rps":40,"retry":{"mode":"auto","max_attempts":5,"base_ms":300,"cap_ms":2400,"jitter":"` +
				jitter + `","respect_retry_after":false}`
		},
		func(string) string {
			return `{"clients":200,"duration_s":2,"every_s":10,"key":true,"outage":{"at_s":0.5,"for_s":1.5}}`
		})
	peak := func(r stormRun) (p int) {
		for _, b := range r.Series[20:] { // after the outage
			p = max(p, b.Retries)
		}
		return p
	}
	var peaks, spread int
	for seed := range seeds {
		none, full := runs["none"][seed], runs["full"][seed]
		for _, r := range []stormRun{none, full} {
			if sum(r.View, func(b herd.Bucket) int { return b.Down }) == 0 {
				t.Errorf("seed %d: no attempt met the outage", seed+1)
			}
		}
		p, q := peak(none), peak(full)
		peaks, spread = peaks+p, spread+q
		if p < 2*q || q == 0 {
			t.Errorf("seed %d, after the outage, the peak of retries a tenth of a second: %d without jitter, %d with full jitter; want at least 2×", seed+1, p, q)
		}
		if a, b := none.Summary.DrainMS, full.Summary.DrainMS; a <= b {
			t.Errorf("seed %d, the backlog cleared %d ms after the outage without jitter, %d ms with full jitter; want longer without", seed+1, a, b)
		}
		t.Logf("seed %d: peak %d vs %d, drain %d vs %d ms", seed+1, p, q, none.Summary.DrainMS, full.Summary.DrainMS)
	}
	if peaks < 3*spread {
		t.Errorf("over the five seeds, the peaks of retries a tenth of a second add up to %d without jitter, %d with full jitter; want at least 3×", peaks, spread)
	}
}
