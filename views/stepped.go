package views

import (
	"context"
	"strings"
)

// SteppedView is the lab's stepped race as its page shows it: a column per
// racer with its points, what each statement did, what each racer's
// transaction sees, and the buttons that step them.
type SteppedView struct {
	Show       bool // the panel is shown: a race runs, or ran and the lesson is about one
	Offer      bool // the race form offers one: the open lesson is about races, and none runs
	ID         string
	OrderID    string
	Amount     int64
	Protection string
	Postgres   bool
	Racers     []RacerView
	Over       bool
	Aborted    string // why it was aborted ("" it was not)
	Fresh      bool   // no racer has run a statement: the article's order can be played
}

// Running reports whether a race is there and not over.
func (v SteppedView) Running() bool { return v.ID != "" && !v.Over }

// RacerView is one racer: its points in order, where it stands, and what
// its transaction sees of the order's payments.
type RacerView struct {
	Name    string
	State   string // ready, running, waiting, done
	Waits   string // whose lock it waits for ("" another transaction's)
	Points  []PointView
	Sees    []SeenPayment
	Outcome string // what the server did, once done
	Status  int    // the answer its client got; 0 none
	GaveUp  bool   // its client stopped waiting
}

// CanStep reports whether the racer stands at a point.
func (r RacerView) CanStep() bool { return r.State == "ready" }

// PointView is one point of a racer: done (with what its statement did),
// next, or still ahead.
type PointView struct {
	Point   string
	Done    bool
	Next    bool
	Result  string // the code of what it did (sim.Step*)
	Rows    int64
	Payment int64
	Waits   string
}

// SeenPayment is a payment as a racer's transaction sees it.
type SeenPayment struct {
	N      int64
	Amount int64
}

// pointName is a point in words; on SQLite a write's point is its
// statements and their COMMIT at once.
func pointName(ctx context.Context, point string, postgres bool) string {
	return pointIn(LangOf(ctx), point, postgres)
}

func pointIn(l Lang, point string, postgres bool) string {
	if !postgres && (point == "insert" || point == "charge") {
		return l.T("stepped.point." + point + ".sqlite")
	}
	return l.T("stepped.point." + point)
}

// stepResult is what a point's statement did, in words.
func stepResult(ctx context.Context, code string, rows, payment int64, waits string) string {
	return resultIn(LangOf(ctx), code, rows, payment, waits)
}

func resultIn(l Lang, code string, rows, payment int64, waits string) string {
	switch code {
	case "found":
		if rows == 0 {
			return l.T("stepped.result.found-none")
		}
		return l.T("stepped.result.found", DiagramCount(l, "stepped.n.payments", int(rows)))
	case "inserted":
		return l.T("stepped.result.inserted", payment)
	case "waits":
		if waits == "" {
			return l.T("stepped.result.waits-other")
		}
		return l.T("stepped.result.waits", waits)
	case "":
		return ""
	}
	return l.T("stepped.result." + code)
}

// racerState says where a racer stands, in words.
func racerState(ctx context.Context, r RacerView) string {
	switch r.State {
	case "ready":
		return T(ctx, "stepped.state.ready")
	case "waiting":
		return stepResult(ctx, "waits", 0, 0, r.Waits)
	case "done":
		return T(ctx, "stepped.state.done", T(ctx, "log.did."+r.Outcome))
	}
	return T(ctx, "stepped.state.running")
}

// seenSays is what a racer's transaction sees of the order, in words.
func seenSays(ctx context.Context, ps []SeenPayment) string {
	if len(ps) == 0 {
		return T(ctx, "stepped.sees.none")
	}
	var ns []string
	for _, p := range ps {
		ns = append(ns, "#"+i64(p.N))
	}
	return T(ctx, "stepped.sees", DiagramCount(LangOf(ctx), "stepped.n.payments", len(ps)), strings.Join(ns, ", "))
}

// SteppedNotice is where the stepped race's refusals are told.
const SteppedNotice = "stepped-notice"

// racerKey is the key that steps a racer: a, b, and v for C (c charges).
func racerKey(name string) string {
	if name == "C" {
		return "v"
	}
	return strings.ToLower(name)
}

// pointMark marks a point done, next or ahead: in a sign and in words (the
// point's result), never by colour alone.
func pointMark(p PointView) string {
	switch {
	case p.Done:
		return "✓"
	case p.Next:
		return "▶"
	}
	return "·"
}

// racerSays is where a racer stands, in words; an aborted racer's 409 is
// its abort, not a 40001.
func racerSays(ctx context.Context, v SteppedView, r RacerView) string {
	s := racerState(ctx, r)
	if r.State == "done" && v.Aborted != "" && r.Outcome == "conflict" {
		s = T(ctx, "stepped.state.aborted")
	}
	if r.GaveUp {
		s += "; " + T(ctx, "stepped.gave-up")
	}
	return s
}

func storeHint(postgres bool) string {
	if postgres {
		return "stepped.postgres"
	}
	return "stepped.sqlite"
}

func overSays(aborted string) string {
	switch aborted {
	case "":
		return "stepped.over"
	case "idle":
		return "stepped.aborted.idle"
	}
	return "stepped.aborted"
}

// ProgressSays is what the progress line says: while a stepped race runs,
// that its racers wait for a person, not that attempts are on their way.
func (p LabPage) ProgressSays() Msg {
	if p.Stepped.Running() {
		return M("stepped.progress")
	}
	return p.Progress
}
