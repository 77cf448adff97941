package lesson

import (
	"context"

	"idemlab/sim"
	"idemlab/sim/client/storm"
	"idemlab/sim/labs"
)

// StormExpect is what the article's last lesson says of a measure of the
// lesson's storms: storm Of's measure against Bound times storm Than's
// (or Bound alone, Than 0), by Rule (">", "≥", "≤"). Storms are numbered
// in the lesson's order, from 1.
type StormExpect struct {
	Measure string // peak-retries, drain-ms, amplification, double-charges
	Of      int
	Than    int
	Rule    string
	Bound   float64
}

// StormSeen is a StormExpect with what the storms showed.
type StormSeen struct {
	StormExpect
	Got, Against float64 // storm Of's measure, and storm Than's (0 when none)
	Met          bool
}

// The measures of a storm that a lesson can hold it to.
const (
	PeakRetries   = "peak-retries"   // the most retries in a tenth of a second after the outage
	DrainMS       = "drain-ms"       // the backlog's time to clear after the outage
	Amplification = "amplification"  // attempts ÷ operations
	DoubleCharges = "double-charges" // payments of an order after its first
)

// measure is storm v's measure m.
func measure(v storm.View, m string) float64 {
	switch m {
	case PeakRetries:
		return float64(v.PeakRetries())
	case DrainMS:
		return float64(v.Summary.DrainMS)
	case Amplification:
		return v.Summary.Amplification
	case DoubleCharges:
		return float64(v.Summary.DoubleCharges)
	}
	return 0
}

// StormFacts are what a class's question about a storm measures: the lab's
// latest storm, and the one before it.
type StormFacts struct {
	Storms        int     `json:"storms"` // kept of the lab, at most two
	Peak          int     `json:"peak"`   // the latest's most retries of a tenth of a second after the outage
	PrevPeak      int     `json:"prev_peak"`
	Amplification float64 `json:"amplification"`
	Doubles       int     `json:"doubles"`
}

// stormFacts reads the lab's latest two storms; nil when it has none.
func (ls *Lessons) stormFacts(l *labs.Lab) *StormFacts {
	views := ls.storms.Latest(l.ID, 2)
	if len(views) == 0 {
		return nil
	}
	last := views[len(views)-1]
	f := &StormFacts{Storms: len(views), Peak: last.PeakRetries(),
		Amplification: last.Summary.Amplification, Doubles: last.Summary.DoubleCharges}
	if len(views) == 2 {
		f.PrevPeak = views[0].PeakRetries()
	}
	return f
}

// stormsSeen holds the lab's storms since its set-up to what the lesson
// expects of them; met when every storm the lesson runs is done and
// each expectation holds.
func (ls *Lessons) stormsSeen(l *labs.Lab, lesson Lesson) ([]StormSeen, bool) {
	want := 0
	for _, a := range lesson.Steps {
		if a.Kind == "storm" {
			want++
		}
	}
	views := ls.storms.Latest(l.ID, want)
	met := len(views) == want
	for _, v := range views {
		met = met && v.State == "done"
	}
	seen := make([]StormSeen, 0, len(lesson.Expect.Storms))
	for _, e := range lesson.Expect.Storms {
		s := StormSeen{StormExpect: e}
		if len(views) == want { // the lesson's storms, all there: Of and Than name them
			s.Got = measure(views[e.Of-1], e.Measure)
			bound := e.Bound
			if e.Than > 0 {
				s.Against = measure(views[e.Than-1], e.Measure)
				bound *= s.Against
			}
			switch e.Rule {
			case ">":
				s.Met = s.Got > bound
			case "≥":
				s.Met = s.Got >= bound
			case "≤":
				s.Met = s.Got <= bound
			}
		}
		met = met && s.Met
		seen = append(seen, s)
	}
	return seen, met
}

// stormLesson is the article's last word told with many clients (SPEC,
// "The retry storm"): retries are inevitable, and with hundreds of
// clients they are a load. Three stories, two storms each, the second
// under one change: after an outage, clients without jitter come back
// together, in spikes, and their backlog takes longer to clear than with
// full jitter (15); without a budget every refusal is retried and the load
// multiplies, a 10 % ratio budget keeps it near what the clients asked
// (15b); a fifth of the answers lost, clients without keys charge some
// orders twice, with keys under UNIQUE none (15c). Checked against the storms' own
// counts; the ledger's totals are the storms' and not the lesson's.
var stormLesson = Lesson{
	N: 15,
	Settings: lessonSettings(func(s *sim.Settings) {
		s.Protection, s.KeyStrategy, s.CapacityRPS = sim.ProtectReplay, sim.KeyUUID, 40
		s.Retry = sim.RetryPolicy{Mode: sim.RetryAuto, MaxAttempts: 5, BaseMS: 300, CapMS: 2400, Jitter: sim.JitterNone,
			Budget: sim.BudgetNone, MaxTokens: 10, TokenRatio: 0.1, BudgetPercent: 10, RespectRetryAfter: false}
	}),
	Steps: []sim.Action{
		stormOf(sim.StormRequest{Clients: 200, DurationS: 2, EveryS: 10, Key: true, Outage: &sim.StormOutage{AtS: 0.5, ForS: 1.5}}),
		switchTo(sim.SettingsPatch{Retry: &sim.RetryPatch{Jitter: ptr(sim.JitterFull)}}),
		stormOf(sim.StormRequest{Clients: 200, DurationS: 2, EveryS: 10, Key: true, Outage: &sim.StormOutage{AtS: 0.5, ForS: 1.5}}),
		switchTo(sim.SettingsPatch{CapacityRPS: ptr(20),
			Retry: &sim.RetryPatch{MaxAttempts: ptr(5), BaseMS: ptr(50), CapMS: ptr(200), Budget: ptr(sim.BudgetNone)}}),
		stormOf(sim.StormRequest{Clients: 100, DurationS: 1, Key: true}),
		switchTo(sim.SettingsPatch{Retry: &sim.RetryPatch{Budget: ptr(sim.BudgetRatio)}}),
		stormOf(sim.StormRequest{Clients: 100, DurationS: 1, Key: true}),
		switchTo(sim.SettingsPatch{Protection: ptr(sim.ProtectUnique), CapacityRPS: ptr(0),
			Retry: &sim.RetryPatch{Budget: ptr(sim.BudgetNone), MaxAttempts: ptr(4), BaseMS: ptr(20), CapMS: ptr(100)}}),
		stormOf(sim.StormRequest{Clients: 40, DurationS: 1, Key: false, Fates: sim.StormFates{ResponseLost: 0.2}}),
		stormOf(sim.StormRequest{Clients: 40, DurationS: 1, Key: true, Fates: sim.StormFates{ResponseLost: 0.2}}),
	},
	Expect: Expect{Storms: []StormExpect{
		{Measure: PeakRetries, Of: 1, Than: 2, Rule: "≥", Bound: 3},
		{Measure: DrainMS, Of: 1, Than: 2, Rule: ">", Bound: 1},
		{Measure: Amplification, Of: 4, Rule: "≤", Bound: 1.15},
		{Measure: Amplification, Of: 3, Than: 4, Rule: "≥", Bound: 1.5},
		{Measure: DoubleCharges, Of: 5, Rule: ">", Bound: 0},
		{Measure: DoubleCharges, Of: 6, Rule: "≤", Bound: 0},
	}},
}

func stormOf(r sim.StormRequest) sim.Action { return sim.Action{Kind: "storm", Storm: &r} }

// StormStories are the storm lesson's three stories, the storm panel's
// presets: each a run of the lesson's steps, two storms and the switch
// between them.
var StormStories = []struct {
	Name     string
	From, To int // the lesson's steps [From, To)
}{{"herd", 0, 3}, {"budget", 3, 7}, {"keys", 7, 10}}

// PlayStory plays the storm lesson's story in the lab, as a preset: the
// lesson's settings with every switch before the story, then the story's
// steps, its two storms run to their ends. The lab's lesson stays where
// it was.
func (ls *Lessons) PlayStory(ctx context.Context, l *labs.Lab, name string) error {
	for _, st := range StormStories {
		if st.Name != name {
			continue
		}
		set := stormLesson.Settings
		for _, a := range stormLesson.Steps[:st.From] {
			if a.Settings != nil {
				var err error
				if set, err = set.Apply(*a.Settings); err != nil {
					return err
				}
			}
		}
		if _, err := ls.labs.UpdateSettings(ctx, l, patchTo(set)); err != nil {
			return err
		}
		for _, a := range stormLesson.Steps[st.From:st.To] {
			if err := ls.player.Play(ctx, l, a); err != nil {
				return err
			}
		}
		return nil
	}
	return sim.Invalid(sim.Broke("story", "one-of", "herd, budget, keys"))
}
