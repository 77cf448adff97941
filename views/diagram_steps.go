package views

import "strings"

// The stepped race's part of the sequence diagram: under the attempts, the
// racers' statements in the order the database ran them, each an arrow
// from the server to the database lane with the racer, the statement and
// what it did. The interleaving a person chose, drawn where it happened.

// DiagramStep is one statement of a stepped race.
type DiagramStep struct {
	Racer, Point, Result string
	Rows, Payment        int64
	Waits                string
	Postgres             bool
}

// steps draws the statements from y down, each on the full width above
// its arrow (nothing else is drawn there), and returns the groups and where
// they end.
func (p sdPainter) steps(ss []DiagramStep, y float64) ([]sdGroup, float64) {
	var gs []sdGroup
	for _, s := range ss {
		y += 50
		class := "sd-request"
		if s.Result == "waits" {
			class = "sd-request sd-waits"
		}
		what := s.Racer + " · " + pointIn(p.l, s.Point, s.Postgres)
		gs = append(gs, sdGroup{Class: "sd-step", Mark: "step", Shapes: []sdShape{
			line(sdServer, y, sdDatabase-7, y, "sd-arrow "+class), head(sdServer, y, sdDatabase-7, y, "sd-head"),
			circle(sdDatabase, y, 4, "sd-dot"),
			text(8, y-24, "start", "sd-key", what),
			text(8, y-6, "start", "sd-label", resultIn(p.l, s.Result, s.Rows, s.Payment, s.Waits)),
		}})
	}
	return gs, y + 16
}

// stepsSay tells the statements in words, for screen readers.
func stepsSay(p sdPainter, ss []DiagramStep) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.Racer + " " + pointIn(p.l, s.Point, s.Postgres) + ": " + resultIn(p.l, s.Result, s.Rows, s.Payment, s.Waits)
	}
	return p.t("diagram.steps.says", strings.Join(parts, "; "))
}
