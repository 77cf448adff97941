package views

// The geometry of the sequence diagram: lanes, rows and shapes, computed in
// Go so that the template only draws.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The drawing: a fixed-width coordinate system whose height grows with the
// attempts. The width is small on purpose: scaled to a 375 px phone the
// labels stay readable, and on a projector they become large.
const (
	sdWidth     = 424.0
	sdClient    = 42.0
	sdNetwork   = 162.0
	sdServer    = 284.0
	sdDatabase  = 374.0
	sdHeadRoom  = 56.0 // the lane heads
	sdMaxShown  = 12   // attempts drawn; older ones are summarised
	sdCharWidth = 9.2  // of a 16-unit bold label, to size the server's boxes
)

type sdLane struct {
	Name string
	X, W float64
}

var sdLanes = [...]sdLane{
	{"client", sdClient, 80},
	{"network", sdNetwork, 96},
	{"server", sdServer, 72},
	{"database", sdDatabase, 88},
}

type sdKind int

const (
	sdLine sdKind = iota
	sdPath
	sdRect
	sdCircle
	sdText
)

// sdShape is one SVG element of the drawing; which fields count depends on
// Kind (a circle's radius is W).
type sdShape struct {
	Kind               sdKind
	X, Y, X2, Y2, W, H float64
	D                  string
	Class              string
	Anchor             string
	Lines              []string
}

// sdGroup is one thing that happened, drawn as a few shapes: a request, a
// loss, the server's work, an answer. Mark names it for tests and styles.
type sdGroup struct {
	Class, Mark, Tip string
	Shapes           []sdShape
}

type sdRow struct {
	A        DiagramAttempt
	Groups   []sdGroup
	Sentence string
}

type sdLayout struct {
	Title, Desc  string
	Height       float64
	Shown, Total int
	Rows         []sdRow
}

func layoutDiagram(d Diagram) sdLayout {
	l := sdLayout{Total: len(d.Attempts)}
	shown := d.Attempts
	if len(shown) > sdMaxShown {
		shown = shown[len(shown)-sdMaxShown:]
	}
	l.Shown = len(shown)
	y := sdHeadRoom
	commits := 0
	for _, a := range shown {
		r, next := layoutAttempt(a, y)
		l.Rows = append(l.Rows, r)
		y = next
	}
	for _, a := range d.Attempts {
		for _, dv := range deliveriesOf(a) {
			if dv.Outcome == "charged" {
				commits++
			}
		}
	}
	l.Height = y + 12
	if d.OperationID == "" {
		l.Height = sdHeadRoom + 40
		l.Title = "Sequence diagram: no operation yet"
		l.Desc = "Four empty lanes: client, network, server, database."
		return l
	}
	l.Title = fmt.Sprintf("Sequence diagram of the charge of %s, %s", d.OrderID, formatAmount(d.Amount))
	desc := fmt.Sprintf("%s across the lanes client, network, server and database; %s committed.",
		plural(l.Total, "attempt", "attempts"), plural(commits, "charge", "charges"))
	if l.Shown < l.Total {
		desc += fmt.Sprintf(" Showing the last %d of %d attempts.", l.Shown, l.Total)
	}
	l.Desc = desc + " The list below tells each attempt in words."
	return l
}

// layoutAttempt draws one attempt from y down and returns where the next
// one starts.
func layoutAttempt(a DiagramAttempt, y0 float64) (sdRow, float64) {
	r := sdRow{A: a, Sentence: attemptSentence(a)}
	add := func(g sdGroup) { r.Groups = append(r.Groups, g) }
	add(sdGroup{Class: "sd-heading", Shapes: []sdShape{
		line(0, y0, sdWidth, y0, "sd-rule"),
		text(6, y0+25, "start", "sd-attempt-title", fmt.Sprintf("Attempt %d · %s", a.N, a.Fate)),
	}})

	// The request: client → network → server, or lost on the way.
	y := y0 + 66
	req := sdGroup{Class: "sd-request", Mark: "request", Tip: keyTip(a),
		Shapes: []sdShape{text(mid(sdClient, sdNetwork), y-10, "middle", keyClass(a), keyLabel(a))}}
	copies := copiesOf(a)
	switch {
	case len(copies) == 0:
		label := "request lost"
		if a.Fate != "request-lost" {
			label = "not reached"
		}
		req.Shapes = append(req.Shapes, line(sdClient, y, sdNetwork-12, y, "sd-arrow"))
		add(req)
		add(lostMark(sdNetwork, y, text(sdNetwork+18, y+6, "start", "sd-label sd-lost-label", label)))
		if a.Status == 0 {
			add(clientNote(y+36, "no answer"))
		}
		return r, y + 56
	case len(copies) == 2:
		req.Shapes = append(req.Shapes,
			line(sdClient, y, sdNetwork, y, "sd-arrow"),
			circle(sdNetwork, y, 5, "sd-node"),
			line(sdNetwork, y, sdServer-7, y, "sd-arrow"), head(sdNetwork, y, sdServer-7, y, "sd-head"),
			line(sdNetwork, y, sdServer-7, y+30, "sd-arrow sd-copy"), head(sdNetwork, y, sdServer-7, y+30, "sd-head"),
			text(sdNetwork-10, y+26, "end", "sd-note", "sent twice"),
		)
		add(req)
		y += 30
	default:
		req.Shapes = append(req.Shapes,
			line(sdClient, y, sdServer-7, y, "sd-arrow"), head(sdClient, y, sdServer-7, y, "sd-head"),
			circle(sdNetwork, y, 5, "sd-node"),
		)
		add(req)
	}
	top := y

	// Each copy: what the server did, then its answer on the way back.
	late := a.Fate == "slow" || (a.Status == 0 && a.Error != "" && a.Fate != "response-lost")
	for i, c := range copies {
		y += 16
		lines := serverDid(c.Outcome)
		h := float64(len(lines))*19 + 16
		if c.Outcome == "charged" {
			add(sdGroup{Class: "sd-work sd-commit", Mark: "commit", Shapes: []sdShape{
				line(sdServer+5, y+h/2, sdDatabase-46, y+h/2, "sd-arrow"), head(sdServer+5, y+h/2, sdDatabase-46, y+h/2, "sd-head"),
				rect(sdDatabase-46, y, 92, h, "sd-box sd-commit-box"),
				text(sdDatabase, y+h/2+6, "middle", "sd-commit-label", "COMMIT"),
			}})
		} else {
			w := float64(maxLen(lines))*sdCharWidth + 22
			cx := min(mid(sdServer, sdDatabase), sdWidth-4-w/2)
			add(sdGroup{Class: "sd-work sd-outcome-" + c.Outcome, Mark: "server", Shapes: []sdShape{
				rect(cx-w/2, y, w, h, "sd-box sd-server-box"),
				text(cx, y+22, "middle", "sd-server-label", lines...),
			}})
		}
		if i == 0 && late {
			add(timeoutMark(y + h/2))
		}
		y += h
		if c.Outcome == "pending" || c.Outcome == "not-reached" {
			continue // no answer yet, or none at all
		}
		y += 34
		status := statusLabel(c.Status)
		back := sdGroup{Class: "sd-response", Mark: "response", Shapes: []sdShape{
			text(mid(sdNetwork, sdServer), y-10, "middle", "sd-status", status),
		}}
		switch {
		case i > 0:
			back.Shapes = append(back.Shapes,
				line(sdServer-5, y, sdNetwork+7, y, "sd-arrow sd-back"), head(sdServer, y, sdNetwork+7, y, "sd-head"),
				text(sdNetwork-12, y+6, "end", "sd-note", "not used"))
			add(back)
		case a.Fate == "response-lost":
			back.Shapes = append(back.Shapes, line(sdServer-5, y, sdNetwork+12, y, "sd-arrow sd-back"))
			add(back)
			add(lostMark(sdNetwork, y, text(sdNetwork-18, y+6, "end", "sd-label sd-lost-label", "answer lost")))
			if a.Status == 0 {
				add(clientNote(y+36, "no answer"))
				y += 20
			}
		case late || a.Status == 0:
			back.Shapes = append(back.Shapes,
				line(sdServer-5, y, sdNetwork, y, "sd-arrow sd-back"), circle(sdNetwork, y, 5, "sd-node"),
				line(sdNetwork, y, sdClient+44, y, "sd-arrow sd-late"),
				text(mid(sdClient, sdNetwork)+10, y-10, "middle", "sd-note", "too late"))
			back.Class += " sd-late-answer"
			back.Mark = "late"
			add(back)
		default:
			back.Shapes = append(back.Shapes,
				line(sdServer-5, y, sdClient+7, y, "sd-arrow sd-back"), head(sdServer, y, sdClient+7, y, "sd-head"),
				circle(sdNetwork, y, 5, "sd-node"))
			add(back)
		}
	}
	// The server is busy from the first copy's arrival to its last answer;
	// drawn first, so that it lies under the arrows.
	busy := sdGroup{Class: "sd-busy", Shapes: []sdShape{rect(sdServer-5, top-2, 10, y-top+4, "sd-activation")}}
	r.Groups = slices.Insert(r.Groups, 0, busy)
	return r, y + 24
}

func lostMark(x, y float64, label sdShape) sdGroup {
	const s = 10
	return sdGroup{Class: "sd-lost", Mark: "lost", Shapes: []sdShape{
		line(x-s, y-s, x+s, y+s, "sd-cross"),
		line(x-s, y+s, x+s, y-s, "sd-cross"),
		label,
	}}
}

func timeoutMark(y float64) sdGroup {
	const r = 11
	return sdGroup{Class: "sd-timeout", Mark: "timeout", Shapes: []sdShape{
		circle(sdClient, y, r, "sd-clock"),
		line(sdClient, y, sdClient, y-7, "sd-hand"),
		line(sdClient, y, sdClient+5, y+3, "sd-hand"),
		text(sdClient+18, y+6, "start", "sd-label sd-timeout-label", "timeout"),
	}}
}

func clientNote(y float64, s string) sdGroup {
	return sdGroup{Class: "sd-client-note", Mark: "no-answer", Shapes: []sdShape{
		text(6, y, "start", "sd-note", s),
	}}
}

// copiesOf lists the copies the network passed to the server, a pending
// placeholder for a copy whose answer is not known yet.
func copiesOf(a DiagramAttempt) []DiagramDelivery {
	n := 1
	switch a.Fate {
	case "request-lost":
		return nil
	case "duplicate":
		n = 2
	}
	got := deliveriesOf(a)
	out := make([]DiagramDelivery, 0, n)
	for c := 1; c <= n; c++ {
		d := DiagramDelivery{Copy: c, Outcome: "pending"}
		for _, x := range got {
			if x.Copy == c {
				d = x
			}
		}
		out = append(out, d)
	}
	if a.Outcome == "not-reached" && len(got) == 0 {
		return nil // lost before the server, whatever the network was set to
	}
	if len(out) == 1 && out[0].Outcome == "not-reached" {
		return nil
	}
	return out
}

// deliveriesOf is what the server answered to each copy; an attempt that
// recorded no copies but an outcome stands for its single copy.
func deliveriesOf(a DiagramAttempt) []DiagramDelivery {
	if len(a.Deliveries) > 0 {
		return a.Deliveries
	}
	switch a.Outcome {
	case "", "pending", "not-reached":
		return nil
	}
	return []DiagramDelivery{{Copy: 1, Status: a.Status, Outcome: a.Outcome}}
}

// serverDid names what the server did, in a box of one or two short lines.
func serverDid(outcome string) []string {
	switch outcome {
	case "charged":
		return []string{"COMMIT"}
	case "duplicate":
		return []string{"key seen", "→ duplicate"}
	case "replayed":
		return []string{"replay", "stored answer"}
	case "in-flight":
		return []string{"409", "in flight"}
	case "mismatch":
		return []string{"422 key reused", "other body"}
	case "rejected":
		return []string{"400", "rejected"}
	case "failed":
		return []string{"server failed"}
	case "not-reached":
		return []string{"unreachable"}
	case "pending":
		return []string{"working…"}
	}
	return []string{outcome}
}

// attemptSentence tells an attempt in plain words.
func attemptSentence(a DiagramAttempt) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Attempt %d, %s: ", a.N, keyLabel(a))
	copies := copiesOf(a)
	switch {
	case len(copies) == 0 && a.Fate == "request-lost":
		b.WriteString("the network lost the request, so the server never saw it")
	case len(copies) == 0:
		b.WriteString("the request did not reach the server")
	case len(copies) == 2:
		b.WriteString("the network delivered it twice: ")
		for i, c := range copies {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "with copy %d the server %s", c.Copy, serverSaid(c.Outcome))
		}
	default:
		b.WriteString("reached the server, which " + serverSaid(copies[0].Outcome))
	}
	switch {
	case a.Status != 0:
		fmt.Fprintf(&b, "; the client got %d.", a.Status)
	case a.Fate == "response-lost" && len(copies) > 0 && copies[0].Outcome != "pending":
		b.WriteString("; the network lost the answer, so the client got no answer.")
	case a.Fate == "slow" || a.Error != "":
		if a.Fate == "slow" || strings.Contains(a.Error, "timeout") || strings.Contains(a.Error, "timed out") {
			b.WriteString("; the client timed out before the answer came.")
		} else {
			b.WriteString("; the client got no answer.")
		}
	default:
		b.WriteString("; the client is still waiting.")
	}
	return b.String()
}

func serverSaid(outcome string) string {
	switch outcome {
	case "charged":
		return "charged the order (COMMIT)"
	case "duplicate":
		return "found the key already used (duplicate)"
	case "replayed":
		return "replayed the stored answer of the first request"
	case "in-flight":
		return "found the first request with this key still in flight (409)"
	case "mismatch":
		return "refused the key, reused with a different body (422)"
	case "rejected":
		return "rejected the request (400)"
	case "failed":
		return "failed"
	case "not-reached":
		return "could not be reached"
	case "pending":
		return "is still working"
	}
	return outcome
}

// keyLabel shortens a key to what fits on an arrow: 8 characters and "…".
func keyLabel(a DiagramAttempt) string {
	if !a.HasKey {
		return "no key"
	}
	k := []rune(a.Key)
	if len(k) > 8 {
		return "key " + string(k[:8]) + "…"
	}
	return "key " + a.Key
}

func keyClass(a DiagramAttempt) string {
	if !a.HasKey {
		return "sd-key sd-no-key"
	}
	return "sd-key"
}

func keyTip(a DiagramAttempt) string {
	if !a.HasKey {
		return "Request without an Idempotency-Key"
	}
	return "Idempotency-Key: " + a.Key
}

func statusLabel(status int) string {
	if status == 0 {
		return "answer"
	}
	return strconv.Itoa(status)
}

func formatAmount(n int64) string { return strconv.FormatInt(n, 10) + " ₽" }

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func maxLen(lines []string) int {
	n := 0
	for _, l := range lines {
		n = max(n, len([]rune(l)))
	}
	return n
}

func mid(a, b float64) float64 { return (a + b) / 2 }

// num writes a coordinate, to a tenth of a unit.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func lineStep(i int) string {
	if i == 0 {
		return "0"
	}
	return "1.2em"
}

func line(x1, y1, x2, y2 float64, class string) sdShape {
	return sdShape{Kind: sdLine, X: x1, Y: y1, X2: x2, Y2: y2, Class: class}
}

func rect(x, y, w, h float64, class string) sdShape {
	return sdShape{Kind: sdRect, X: x, Y: y, W: w, H: h, Class: class}
}

func circle(x, y, r float64, class string) sdShape {
	return sdShape{Kind: sdCircle, X: x, Y: y, W: r, Class: class}
}

func text(x, y float64, anchor, class string, lines ...string) sdShape {
	return sdShape{Kind: sdText, X: x, Y: y, Anchor: anchor, Class: class, Lines: lines}
}

// head is an arrowhead at (x2, y2) pointing away from (x1, y1), drawn as a
// shape of its own rather than an SVG marker, so that it takes the colour of
// its arrow's class.
func head(x1, y1, x2, y2 float64, class string) sdShape {
	dx, dy := x2-x1, y2-y1
	n := math.Hypot(dx, dy)
	ux, uy := dx/n, dy/n
	bx, by := x2-14*ux, y2-14*uy
	px, py := -uy*7, ux*7
	d := fmt.Sprintf("M%s %sL%s %sL%s %sZ", num(x2), num(y2), num(bx+px), num(by+py), num(bx-px), num(by-py))
	return sdShape{Kind: sdPath, D: d, Class: class}
}
