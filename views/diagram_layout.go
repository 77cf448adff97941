package views

// The geometry of the sequence diagram: lanes, rows and shapes, computed in
// Go so that the template only draws. Every word comes from diagramMessages
// in the reader's language, and the boxes are sized to the translated words.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The drawing: a fixed-width coordinate system whose height grows with the
// attempts. The width is small on purpose: scaled to a 375 px phone the
// labels stay readable, and on a projector they become large. The lanes
// stand evenly, as far apart as "потерялся", the widest word of a lost
// mark, needs between two lifelines.
const (
	sdWidth    = 440.0
	sdClient   = 55.0
	sdNetwork  = 165.0
	sdServer   = 275.0
	sdDatabase = 385.0
	sdHeadRoom = 56.0 // the lane heads
	sdMaxShown = 12   // attempts drawn; older ones are summarised
	sdMargin   = 4.0  // kept free at the drawing's edges
	sdLaneGap  = 6.0  // between two lane heads
	sdLaneFont = 17.0 // .sd-lane
	sdLabel    = 16.0 // .sd-label, .sd-note, .sd-key, .sd-server-label
	sdLineStep = 1.2  // em between the lines of one label
)

// sdLane is one lane's head: its name, the name in full when the head shows
// a short one, where it stands and how wide its box is.
type sdLane struct {
	Name, Full string
	Class      string
	X, W       float64
	Y          float64 // the head's top: 6, or where the queue's part starts
}

// sdLaneKeys are the lanes, left to right.
var sdLaneKeys = [...]struct {
	key  string
	x, w float64 // the lifeline and the narrowest head
}{
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
	Note         string // "Showing the last 12 of N attempts", when some are not drawn
	Lanes        []sdLane
	Rows         []sdRow
	LifeEnd      float64   // where the attempts' lifelines end
	QueueY       float64   // where the queue's part starts; 0 for none
	QueueLanes   []sdLane  // its lanes
	Queue        []sdGroup // its rows
	// The caption: the words before and after the order id, which the
	// template sets in bold, and the key strategy in words.
	Before, After, Strategy string
}

// sdPainter lays out a diagram in one language.
type sdPainter struct{ l Lang }

func layoutDiagram(d Diagram, lang Lang) sdLayout {
	p := sdPainter{lang}
	l := sdLayout{Total: len(d.Attempts), Lanes: p.lanes()}
	shown := d.Attempts
	if len(shown) > sdMaxShown {
		shown = shown[len(shown)-sdMaxShown:]
	}
	l.Shown = len(shown)
	y := sdHeadRoom
	commits := 0
	for _, a := range shown {
		r, next := p.attempt(a, y)
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
	l.LifeEnd = l.Height - 6
	if len(d.Messages) > 0 && d.OperationID != "" {
		l.QueueY = y + 8
		l.QueueLanes = p.queueLanes(l.QueueY + 34)
		var end float64
		l.Queue, end = p.queue(d.Messages, l.QueueY+34+40)
		l.LifeEnd = l.QueueY
		l.Height = end + 12
	}
	if d.OperationID == "" {
		l.Height = sdHeadRoom + 40
		l.Title = p.t("diagram.title.empty")
		l.Desc = p.t("diagram.desc.empty")
		return l
	}
	amount := p.l.Money(d.Amount)
	caption := "diagram.caption"
	if d.Method == "PUT" || d.Method == "DELETE" {
		caption = "diagram.caption." + d.Method
	}
	l.Before, l.After = p.around(caption, d.OrderID, amount)
	l.Strategy = p.word("diagram.strategy.", d.KeyStrategy)
	l.Title = p.t("diagram.title", d.OrderID, amount)
	desc := p.t("diagram.desc", p.count("diagram.n.attempts", l.Total), p.count("diagram.n.charges", commits))
	if l.Shown < l.Total {
		l.Note = p.t("diagram.note.last", l.Shown, p.count("diagram.n.of-attempts", l.Total))
		desc += " " + l.Note
	}
	l.Desc = desc + " " + p.t("diagram.desc.list")
	if say := p.queueSays(d.Messages); say != "" {
		l.Desc += " " + say
	}
	return l
}

// t is the message key in the painter's language.
func (p sdPainter) t(key string, args ...any) string { return p.l.T(key, args...) }

// word is a machine value (a fate, an outcome, a key strategy) in words:
// the catalog's prefix+value, or the value itself when the catalog has no
// words for it.
func (p sdPainter) word(prefix, value string) string {
	if _, ok := diagramMessages[prefix+value]; !ok {
		return value
	}
	return p.t(prefix + value)
}

// lines is the message key cut at its line breaks, for a label of a few
// short lines.
func (p sdPainter) lines(key string, args ...any) []string {
	return strings.Split(p.t(key, args...), "\n")
}

// count is n with the form of the counted word that n takes: the message
// holds the forms split by "|", each with a %d, one|many in English and
// one|few|many in Russian (1 попытка, 2 попытки, 5 попыток).
func (p sdPainter) count(key string, n int) string {
	return fmt.Sprintf(pluralForm(p.l, p.t(key), int64(n)), n)
}

// around fills the message key with a marked first argument and the rest,
// and cuts it at the mark: the words before and after the first argument,
// which the template writes in its own element.
func (p sdPainter) around(key string, args ...any) (before, after string) {
	const mark = "\x00"
	args = slices.Clone(args)
	args[0] = mark
	before, after, _ = strings.Cut(p.t(key, args...), mark)
	return before, after
}

// lanes names the lanes and sizes their heads to the names: at least as
// wide as the English ones, within the drawing and clear of each other. A
// name that still does not fit is set smaller.
func (p sdPainter) lanes() []sdLane {
	out := make([]sdLane, len(sdLaneKeys))
	for i, k := range sdLaneKeys {
		name := p.t("diagram.lane." + k.key)
		full := p.t("diagram.lane." + k.key + ".full")
		out[i] = sdLane{Name: name, Full: full, Class: "sd-lane", X: k.x,
			W: max(k.w, sdTextWidth(name, sdLaneFont)+16)}
		out[i].W = min(out[i].W, 2*(k.x-sdMargin/2), 2*(sdWidth-sdMargin/2-k.x))
	}
	for i := 0; i+1 < len(out); i++ {
		a, b := &out[i], &out[i+1]
		if over := a.W/2 + b.W/2 + sdLaneGap - (b.X - a.X); over > 0 {
			if a.W > b.W {
				a.W -= 2 * over
			} else {
				b.W -= 2 * over
			}
		}
	}
	for i := range out {
		if sdTextWidth(out[i].Name, sdLaneFont)+8 > out[i].W {
			out[i].Class = "sd-lane sd-lane-small"
		}
	}
	return out
}

// attempt draws one attempt from y down and returns where the next one
// starts.
func (p sdPainter) attempt(a DiagramAttempt, y0 float64) (sdRow, float64) {
	r := sdRow{A: a, Sentence: p.sentence(a)}
	add := func(g sdGroup) { r.Groups = append(r.Groups, g) }
	add(sdGroup{Class: "sd-heading", Shapes: []sdShape{
		line(0, y0, sdWidth, y0, "sd-rule"),
		text(6, y0+25, "start", "sd-attempt-title", p.t("diagram.attempt.title", a.N, p.word("diagram.fate.", a.Fate))),
	}})

	// The request: client → network → server, or lost on the way.
	y := y0 + 66
	copies := copiesOf(a)
	keyY := y - 10
	if len(copies) == 0 {
		keyY = y - 17 // clear of the ✕ at the arrow's end
	}
	req := sdGroup{Class: "sd-request", Mark: "request", Tip: p.keyTip(a),
		Shapes: []sdShape{text(mid(sdClient, sdNetwork), keyY, "middle", keyClass(a), p.keyLabel(a))}}
	switch {
	case len(copies) == 0:
		words := p.t("diagram.lost.request")
		if a.Fate != "request-lost" {
			words = p.t("diagram.lost.not-reached")
		}
		req.Shapes = append(req.Shapes, line(sdClient, y, sdNetwork-12, y, "sd-arrow"))
		add(req)
		add(lostMark(sdNetwork, y, words, true))
		if a.Status == 0 {
			add(p.clientNote(y + 36))
		}
		return r, y + 56
	case len(copies) == 2:
		req.Shapes = append(req.Shapes,
			line(sdClient, y, sdNetwork, y, "sd-arrow"),
			circle(sdNetwork, y, 5, "sd-node"),
			line(sdNetwork, y, sdServer-7, y, "sd-arrow"), head(sdNetwork, y, sdServer-7, y, "sd-head"),
			line(sdNetwork, y, sdServer-7, y+30, "sd-arrow sd-copy"), head(sdNetwork, y, sdServer-7, y+30, "sd-head"),
			sdLabelText(sdNetwork-10, y+26, "end", "sd-note", p.t("diagram.note.twice"), sdNetwork-10-sdMargin, false),
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
	late := a.Fate == "slow" || (a.Status == 0 && a.Error != "" && a.Fate != "response-lost" && !dropped(copies))
	for i, c := range copies {
		y += 16
		lines := p.serverDid(c.Outcome)
		h := float64(len(lines))*19 + 16
		if c.Outcome == "charged" {
			add(sdGroup{Class: "sd-work sd-commit", Mark: "commit", Shapes: []sdShape{
				line(sdServer+5, y+h/2, sdDatabase-46, y+h/2, "sd-arrow"), head(sdServer+5, y+h/2, sdDatabase-46, y+h/2, "sd-head"),
				rect(sdDatabase-46, y, 92, h, "sd-box sd-commit-box"),
				text(sdDatabase, y+h/2+6, "middle", "sd-commit-label", lines...),
			}})
		} else {
			w := sdLinesWidth(lines, sdLabel) + 22
			cx := min(mid(sdServer, sdDatabase), sdWidth-sdMargin-w/2)
			add(sdGroup{Class: "sd-work sd-outcome-" + c.Outcome, Mark: "server", Shapes: []sdShape{
				rect(cx-w/2, y, w, h, "sd-box sd-server-box"),
				text(cx, y+22, "middle", "sd-server-label", lines...),
			}})
		}
		if i == 0 && late {
			add(p.timeoutMark(y + h/2))
		}
		y += h
		if c.Outcome == "pending" || c.Outcome == "not-reached" {
			continue // no answer yet, or none at all
		}
		if c.Outcome == "dropped" { // the server died with it: no answer comes back
			if i == 0 && a.Status == 0 {
				add(p.clientNote(y + 30))
				y += 30
			}
			continue
		}
		y += 34
		status := p.statusLabel(c.Status)
		back := sdGroup{Class: "sd-response", Mark: "response", Shapes: []sdShape{
			text(mid(sdNetwork, sdServer), y-10, "middle", "sd-status", status),
		}}
		switch {
		case i > 0:
			back.Shapes = append(back.Shapes,
				line(sdServer-5, y, sdNetwork+7, y, "sd-arrow sd-back"), head(sdServer, y, sdNetwork+7, y, "sd-head"),
				sdLabelText(sdNetwork-12, y+6, "end", "sd-note", p.t("diagram.note.unused"), sdNetwork-12-sdMargin, true))
			add(back)
		case a.Fate == "response-lost":
			back.Shapes = append(back.Shapes, line(sdServer-5, y, sdNetwork+12, y, "sd-arrow sd-back"))
			add(back)
			add(lostMark(sdNetwork, y, p.t("diagram.lost.answer"), false))
			if a.Status == 0 {
				add(p.clientNote(y + 36))
				y += 20
			}
		case late || a.Status == 0:
			back.Shapes = append(back.Shapes,
				line(sdServer-5, y, sdNetwork, y, "sd-arrow sd-back"), circle(sdNetwork, y, 5, "sd-node"),
				line(sdNetwork, y, sdClient+44, y, "sd-arrow sd-late"),
				text(mid(sdClient, sdNetwork)+10, y-10, "middle", "sd-note", p.t("diagram.note.late")))
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

// dropped reports whether the server died with the request: the client's
// missing answer is its doing, not a timeout's.
func dropped(copies []DiagramDelivery) bool {
	return len(copies) > 0 && copies[0].Outcome == "dropped"
}

// lostMark is the network's ✕ at (x, y) and its words: right of it for a
// request, left of it for an answer, between the next lifelines, which the
// words never cross (they wrap instead).
func lostMark(x, y float64, words string, right bool) sdGroup {
	const s, gap, clear = 10, 12, 3 // the ✕'s arm, from its centre to the words, from the words to a lifeline
	l := sdLabelText(x-gap, y+6, "end", "sd-label sd-lost-label", words, x-gap-sdClient-clear, true)
	if right {
		l = sdLabelText(x+gap, y+6, "start", "sd-label sd-lost-label", words, sdServer-clear-x-gap, true)
	}
	return sdGroup{Class: "sd-lost", Mark: "lost", Shapes: []sdShape{
		line(x-s, y-s, x+s, y+s, "sd-cross"),
		line(x-s, y+s, x+s, y-s, "sd-cross"),
		l,
	}}
}

func (p sdPainter) timeoutMark(y float64) sdGroup {
	const r = 11
	return sdGroup{Class: "sd-timeout", Mark: "timeout", Shapes: []sdShape{
		circle(sdClient, y, r, "sd-clock"),
		line(sdClient, y, sdClient, y-7, "sd-hand"),
		line(sdClient, y, sdClient+5, y+3, "sd-hand"),
		sdLabelText(sdClient+18, y+6, "start", "sd-label sd-timeout-label", p.t("diagram.timeout"), sdNetwork-8-sdClient-18, true),
	}}
}

func (p sdPainter) clientNote(y float64) sdGroup {
	return sdGroup{Class: "sd-client-note", Mark: "no-answer", Shapes: []sdShape{
		text(6, y, "start", "sd-note", p.t("diagram.no-answer")),
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

// serverDid names what the server did, in a box of a few short lines; the
// catalog's words break the lines.
func (p sdPainter) serverDid(outcome string) []string {
	if _, ok := diagramMessages["diagram.box."+outcome]; !ok {
		return []string{outcome}
	}
	return p.lines("diagram.box." + outcome)
}

// sentence tells an attempt in plain words.
func (p sdPainter) sentence(a DiagramAttempt) string {
	var b strings.Builder
	b.WriteString(p.t("diagram.say.attempt", a.N, p.keyLabel(a)))
	copies := copiesOf(a)
	switch {
	case len(copies) == 0 && a.Fate == "request-lost":
		b.WriteString(p.t("diagram.say.request-lost"))
	case len(copies) == 0:
		b.WriteString(p.t("diagram.say.not-reached"))
	case len(copies) == 2:
		b.WriteString(p.t("diagram.say.twice"))
		for i, c := range copies {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(p.t("diagram.say.copy", c.Copy, p.serverSaid(c.Outcome)))
		}
	default:
		b.WriteString(p.t("diagram.say.reached", p.serverSaid(copies[0].Outcome)))
	}
	switch {
	case a.Status != 0:
		b.WriteString(p.t("diagram.say.got", a.Status))
	case a.Fate == "response-lost" && len(copies) > 0 && copies[0].Outcome != "pending":
		b.WriteString(p.t("diagram.say.answer-lost"))
	case a.Fate == "slow" || a.Error != "":
		if a.Fate == "slow" || strings.Contains(a.Error, "timeout") || strings.Contains(a.Error, "timed out") {
			b.WriteString(p.t("diagram.say.timed-out"))
		} else {
			b.WriteString(p.t("diagram.say.no-answer"))
		}
	default:
		b.WriteString(p.t("diagram.say.waiting"))
	}
	return b.String()
}

// serverSaid is what the server did, as the end of a sentence whose
// subject is the server.
func (p sdPainter) serverSaid(outcome string) string {
	return p.word("diagram.did.", outcome)
}

// keyLabel shortens a key to what fits on an arrow: 8 characters and "…".
func (p sdPainter) keyLabel(a DiagramAttempt) string {
	if !a.HasKey {
		return p.t("diagram.key.none")
	}
	k := []rune(a.Key)
	if len(k) > 8 {
		return p.t("diagram.key", string(k[:8])+"…")
	}
	return p.t("diagram.key", a.Key)
}

func keyClass(a DiagramAttempt) string {
	if !a.HasKey {
		return "sd-key sd-no-key"
	}
	return "sd-key"
}

func (p sdPainter) keyTip(a DiagramAttempt) string {
	if !a.HasKey {
		return p.t("diagram.tip.no-key")
	}
	return p.t("diagram.tip.key", a.Key)
}

func (p sdPainter) statusLabel(status int) string {
	if status == 0 {
		return p.t("diagram.status.answer")
	}
	return strconv.Itoa(status)
}

// sdTextWidth estimates how wide s is set in a bold sans-serif of size
// units, counting runes, not bytes. The advances are DejaVu Sans Bold's
// (Chromium's system-ui on Linux), the widest of the usual system fonts: a
// box sized by them holds the words in any of those fonts.
func sdTextWidth(s string, size float64) float64 {
	em := 0.0
	for _, r := range s {
		a, ok := sdAdvances[r]
		if !ok {
			a = 0.8
		}
		em += a
	}
	return em * size
}

// sdAdvances are the advances of DejaVu Sans Bold, in em.
var sdAdvances = func() map[rune]float64 {
	m := map[rune]float64{}
	for _, set := range []struct {
		runes    string
		hundreds []int
	}{
		{"abcdefghijklmnopqrstuvwxyz", []int{67, 72, 59, 72, 68, 44, 72, 71, 34, 34, 67, 34, 104, 71, 69, 72, 72, 49, 60, 48, 71, 65, 92, 65, 65, 58}},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZ", []int{77, 76, 73, 83, 68, 68, 82, 84, 37, 37, 77, 64, 100, 84, 85, 73, 85, 77, 72, 68, 81, 77, 110, 77, 72, 73}},
		{"абвгдеёжзийклмнопрстуфхцчшщъыьэюя", []int{67, 70, 63, 52, 81, 68, 68, 100, 58, 70, 70, 68, 73, 82, 69, 69, 69, 72, 59, 58, 65, 99, 65, 74, 69, 106, 111, 75, 90, 63, 59, 97, 64}},
		{"АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ", []int{77, 76, 76, 64, 89, 68, 68, 122, 71, 84, 84, 82, 83, 100, 84, 85, 84, 73, 73, 68, 77, 99, 77, 93, 81, 124, 133, 94, 104, 76, 73, 117, 77}},
		{"0123456789", []int{70, 70, 70, 70, 70, 70, 70, 70, 70, 70}},
		{" .,:;·…→✕-–—()%₽«»\"'!?/", []int{35, 38, 38, 40, 40, 38, 100, 84, 84, 42, 50, 100, 46, 46, 100, 70, 65, 65, 40, 28, 44, 58, 37}},
		// The no-break space and the minus of amounts as Lang.Money writes them.
		{"\u00a0\u2212", []int{35, 84}},
	} {
		for i, r := range []rune(set.runes) {
			m[r] = float64(set.hundreds[i]) / 100
		}
	}
	return m
}()

// sdLinesWidth is the width of the widest of lines.
func sdLinesWidth(lines []string, size float64) float64 {
	w := 0.0
	for _, l := range lines {
		w = max(w, sdTextWidth(l, size))
	}
	return w
}

// sdLabelText is a label of one line that breaks at its spaces into more
// when it is wider than room; the lines then grow upwards (up) or downwards
// from y.
func sdLabelText(x, y float64, anchor, class, s string, room float64, up bool) sdShape {
	lines := sdWrap(s, room, sdLabel)
	if up {
		y -= float64(len(lines)-1) * sdLineStep * sdLabel
	}
	return text(x, y, anchor, class, lines...)
}

// sdWrap breaks s at spaces into lines no wider than room, as far as its
// words allow.
func sdWrap(s string, room, size float64) []string {
	if sdTextWidth(s, size) <= room {
		return []string{s}
	}
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = w
		case sdTextWidth(cur+" "+w, size) <= room:
			cur += " " + w
		default:
			lines = append(lines, cur)
			cur = w
		}
	}
	return append(lines, cur)
}

func mid(a, b float64) float64 { return (a + b) / 2 }

// num writes a coordinate, to a tenth of a unit.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func lineStep(i int) string {
	if i == 0 {
		return "0"
	}
	return strconv.FormatFloat(sdLineStep, 'f', -1, 64) + "em"
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
