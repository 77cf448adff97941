package views

import (
	"strings"
)

// StormView is the storm panel: the lab's last two storms drawn on one
// time axis and one scale, a table of their numbers, and the form that
// starts another.
type StormView struct {
	Show    bool // the lab has a storm, or its lesson is about storms
	Running string
	Storms  []StormRun // oldest first, at most two
	Lessons bool       // the storm lesson is open: its steps run the storms
}

// StormRun is one storm as the panel draws it.
type StormRun struct {
	N                   int // 1 or 2: its place in the panel
	ID, State           string
	Path                string // its address in the API: its JSON; + "/series.csv" its series as CSV
	Clients, DurationS  int
	EveryS              float64
	OutageAt, OutageFor float64 // seconds; OutageFor 0: no outage
	Key                 bool
	Lost                float64 // the share of answers lost
	Protection, Jitter  string
	Budget              string
	BudgetPercent       int
	Capacity            int
	Buckets             []StormBucket // a tenth of a second each
	Operations          int
	Completed           int
	Attempts            int
	Amplification       float64
	DrainMS             int64
	DoubleCharges       int
	Peak                int // the most retries of a tenth of a second after the outage
}

// StormBucket is what happened in a tenth of a second of a storm.
type StormBucket struct {
	First, Retries, Admitted, Busy, Down, Successes int
}

// stormLines are the chart's lines, in the legend's order: a class each
// (its colour and dash), a word each, and the count each draws.
var stormLines = []struct {
	Class, Key string
	Of         func(StormBucket) int
}{
	{"s-first", "storm.line.first", func(b StormBucket) int { return b.First }},
	{"s-retries", "storm.line.retries", func(b StormBucket) int { return b.Retries }},
	{"s-admitted", "storm.line.admitted", func(b StormBucket) int { return b.Admitted }},
	{"s-busy", "storm.line.busy", func(b StormBucket) int { return b.Busy + b.Down }},
	{"s-ok", "storm.line.ok", func(b StormBucket) int { return b.Successes }},
}

// The chart's box, in the SVG's units.
const (
	chartW, chartH = 480, 124
	plotL, plotR   = 40, 470
	plotT, plotB   = 6, 104
)

// stormAxis is the time and count scales every chart of the panel shares.
type stormAxis struct {
	Tenths int // the time axis's length, in tenths of a second
	Top    int // the count axis's top, per tenth of a second
}

// axis is the shared scales of the panel's storms: as long as the longest
// that has begun, as high as the highest count of any line.
func (v StormView) axis() stormAxis {
	a := stormAxis{Tenths: 10, Top: 10}
	for _, r := range v.Storms {
		for i, b := range r.Buckets {
			for _, l := range stormLines {
				if n := l.Of(b); n > 0 {
					a.Tenths = max(a.Tenths, i+1)
					a.Top = max(a.Top, n)
				}
			}
		}
		a.Tenths = max(a.Tenths, int((r.OutageAt+r.OutageFor)*10)+1)
	}
	a.Tenths = (a.Tenths + 9) / 10 * 10 // whole seconds
	a.Top = niceTop(a.Top)
	return a
}

// niceTop rounds n up to 1, 2 or 5 times a power of ten.
func niceTop(n int) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}

func (a stormAxis) x(tenth float64) float64 {
	return plotL + tenth*float64(plotR-plotL)/float64(a.Tenths)
}

func (a stormAxis) y(n int) float64 {
	return plotB - float64(n)*float64(plotB-plotT)/float64(a.Top)
}

// points is one line of a storm as an SVG polyline's points, each tenth
// drawn at its middle.
func (a stormAxis) points(r StormRun, of func(StormBucket) int) string {
	var b strings.Builder
	for i, bk := range r.Buckets[:min(len(r.Buckets), a.Tenths)] {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(num(a.x(float64(i) + 0.5)))
		b.WriteByte(',')
		b.WriteString(num(a.y(of(bk))))
	}
	return b.String()
}

// secondTicks are the time axis's labelled ticks: every 1, 2, 5 or 10 s.
func (a stormAxis) secondTicks() []int {
	step := 1
	for _, s := range []int{1, 2, 5, 10} {
		step = s
		if a.Tenths/10/s <= 10 {
			break
		}
	}
	var out []int
	for s := 0; s*10 <= a.Tenths; s += step {
		out = append(out, s)
	}
	return out
}

// StormSecond is a second of a storm, summed, for the table.
type StormSecond struct {
	At                                              int
	First, Retries, Admitted, Busy, Down, Successes int
}

// Seconds sums the storm by the second, up to its last busy one.
func (r StormRun) Seconds() []StormSecond {
	var out []StormSecond
	for i, b := range r.Buckets {
		if i%10 == 0 {
			out = append(out, StormSecond{At: i / 10})
		}
		s := &out[len(out)-1]
		s.First, s.Retries, s.Admitted = s.First+b.First, s.Retries+b.Retries, s.Admitted+b.Admitted
		s.Busy, s.Down, s.Successes = s.Busy+b.Busy, s.Down+b.Down, s.Successes+b.Successes
	}
	for len(out) > 0 {
		last := out[len(out)-1]
		if last.First+last.Retries > 0 {
			break
		}
		out = out[:len(out)-1]
	}
	return out
}

// stormsPoll is how often the storms page asks for its storms again.
func stormsPoll(v StormView) string {
	if v.Running != "" {
		return "every 1s"
	}
	return "every 3s"
}
