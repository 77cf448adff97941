package views

// The geometry of the sequence diagram: lanes, rows and shapes, computed in
// Go so that the template only draws. Every word comes from diagramMessages
// in the reader's language, and the boxes are sized to the translated words.
// Here the lanes and the attempts' part; the queue's is in diagram_queue.go.

import "slices"

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
	// A stepped race's statements come first: the interleaving is its
	// story; the attempts, waiting on the server meanwhile, follow.
	if len(d.Steps) > 0 && d.OperationID != "" {
		l.StepsY = y + 2
		l.Steps, y = p.steps(d.Steps, l.StepsY+30)
	}
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
	if len(d.Steps) > 0 {
		l.Desc += " " + stepsSay(p, d.Steps)
	}
	if say := p.queueSays(d.Messages); say != "" {
		l.Desc += " " + say
	}
	return l
}

// lanes names the lanes and sizes their heads to the names: at least as
// wide as the English ones, within the drawing and clear of each other. A
// name that still does not fit is set smaller.
func (p sdPainter) lanes() []sdLane {
	out := make([]sdLane, len(sdLaneKeys))
	for i, k := range sdLaneKeys {
		name := p.t("diagram.lane." + k.key)
		full := p.t("diagram.lane." + k.key + ".full")
		out[i] = sdLane{Name: name, Full: full, Class: "sd-lane", X: k.x, Y: 6,
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
	r.Groups = []sdGroup{{Class: "sd-heading", Shapes: []sdShape{
		line(0, y0, sdWidth, y0, "sd-rule"),
		text(6, y0+25, "start", "sd-attempt-title", p.t("diagram.attempt.title", a.N, p.word("diagram.fate.", a.Fate))),
	}}}

	// The request: client → network → server, or lost on the way.
	y := y0 + 66
	copies := copiesOf(a)
	if len(copies) == 0 {
		r.Groups = append(r.Groups, p.lostRequest(a, y)...)
		return r, y + 56
	}
	req, y := p.request(a, copies, y)
	r.Groups = append(r.Groups, req)
	top := y

	// Each copy: what the server did, then its answer on the way back.
	late := a.Fate == "slow" || (a.Status == 0 && a.Error != "" && a.Fate != "response-lost" && !dropped(copies))
	for i, c := range copies {
		var gs []sdGroup
		gs, y = p.served(a, c, i, late, y)
		r.Groups = append(r.Groups, gs...)
	}
	// The server is busy from the first copy's arrival to its last answer;
	// drawn first, so that it lies under the arrows.
	busy := sdGroup{Class: "sd-busy", Shapes: []sdShape{rect(sdServer-5, top-2, 10, y-top+4, "sd-activation")}}
	r.Groups = slices.Insert(r.Groups, 0, busy)
	return r, y + 24
}

// requestOf is the request's group: its key above the arrow, at keyY (in
// italics when it carries none), and the key in full as its tooltip.
func (p sdPainter) requestOf(a DiagramAttempt, keyY float64) sdGroup {
	class := "sd-key"
	if !a.HasKey {
		class = "sd-key sd-no-key"
	}
	return sdGroup{Class: "sd-request", Mark: "request", Tip: p.keyTip(a),
		Shapes: []sdShape{text(mid(sdClient, sdNetwork), keyY, "middle", class, p.keyLabel(a))}}
}

// lostRequest is a request that never reached the server, its arrow at y
// ending in the network's ✕, and the client's missing answer.
func (p sdPainter) lostRequest(a DiagramAttempt, y float64) []sdGroup {
	words := p.t("diagram.lost.request")
	if a.Fate != "request-lost" {
		words = p.t("diagram.lost.not-reached")
	}
	req := p.requestOf(a, y-17) // clear of the ✕ at the arrow's end
	req.Shapes = append(req.Shapes, line(sdClient, y, sdNetwork-12, y, "sd-arrow"))
	gs := []sdGroup{req, lostMark(sdNetwork, y, words, true)}
	if a.Status == 0 {
		gs = append(gs, p.clientNote(y+36))
	}
	return gs
}

// request is a request that reached the server, its arrow at y: once, or
// twice when the network delivered it twice. It returns where the server's
// part starts.
func (p sdPainter) request(a DiagramAttempt, copies []DiagramDelivery, y float64) (sdGroup, float64) {
	req := p.requestOf(a, y-10)
	if len(copies) == 2 {
		req.Shapes = append(req.Shapes,
			line(sdClient, y, sdNetwork, y, "sd-arrow"),
			circle(sdNetwork, y, 5, "sd-node"),
			line(sdNetwork, y, sdServer-7, y, "sd-arrow"), head(sdNetwork, y, sdServer-7, y, "sd-head"),
			line(sdNetwork, y, sdServer-7, y+30, "sd-arrow sd-copy"), head(sdNetwork, y, sdServer-7, y+30, "sd-head"),
			sdLabelText(sdNetwork-10, y+26, "end", "sd-note", p.t("diagram.note.twice"), sdNetwork-10-sdMargin, false),
		)
		return req, y + 30
	}
	req.Shapes = append(req.Shapes,
		line(sdClient, y, sdServer-7, y, "sd-arrow"), head(sdClient, y, sdServer-7, y, "sd-head"),
		circle(sdNetwork, y, 5, "sd-node"),
	)
	return req, y
}

// served is what the server did with copy i, from y down, and its answer
// on the way back, if one comes; late says the client gave up before the
// answer. It returns where the next copy starts.
func (p sdPainter) served(a DiagramAttempt, c DiagramDelivery, i int, late bool, y float64) ([]sdGroup, float64) {
	y += 16
	work, h := p.work(c, y)
	gs := []sdGroup{work}
	if i == 0 && late {
		gs = append(gs, p.timeoutMark(y+h/2))
	}
	y += h
	switch c.Outcome {
	case "pending", "not-reached":
		return gs, y // no answer yet, or none at all
	case "dropped": // the server died with it: no answer comes back
		if i == 0 && a.Status == 0 {
			gs = append(gs, p.clientNote(y+30))
			y += 30
		}
		return gs, y
	}
	back, y := p.answer(a, c, i, late, y+34)
	return append(gs, back...), y
}

// work is the server's box for a copy, from y down, and its height: a
// COMMIT in the database when it charged, else what it did.
func (p sdPainter) work(c DiagramDelivery, y float64) (sdGroup, float64) {
	lines := p.serverDid(c.Outcome)
	h := float64(len(lines))*19 + 16
	if c.Outcome == "charged" {
		return sdGroup{Class: "sd-work sd-commit", Mark: "commit", Shapes: []sdShape{
			line(sdServer+5, y+h/2, sdDatabase-46, y+h/2, "sd-arrow"), head(sdServer+5, y+h/2, sdDatabase-46, y+h/2, "sd-head"),
			rect(sdDatabase-46, y, 92, h, "sd-box sd-commit-box"),
			text(sdDatabase, y+h/2+6, "middle", "sd-commit-label", lines...),
		}}, h
	}
	w := sdLinesWidth(lines, sdLabel) + 22
	cx := min(mid(sdServer, sdDatabase), sdWidth-sdMargin-w/2)
	return sdGroup{Class: "sd-work sd-outcome-" + c.Outcome, Mark: "server", Shapes: []sdShape{
		rect(cx-w/2, y, w, h, "sd-box sd-server-box"),
		text(cx, y+22, "middle", "sd-server-label", lines...),
	}}, h
}

// answer is the server's answer to copy i, its arrow at y: a second copy's
// goes unused, the network may lose it, the client may have given up on
// it (late), or it arrives. It returns where the copy's part ends.
func (p sdPainter) answer(a DiagramAttempt, c DiagramDelivery, i int, late bool, y float64) ([]sdGroup, float64) {
	back := sdGroup{Class: "sd-response", Mark: "response", Shapes: []sdShape{
		text(mid(sdNetwork, sdServer), y-10, "middle", "sd-status", p.statusLabel(c.Status)),
	}}
	switch {
	case i > 0:
		back.Shapes = append(back.Shapes,
			line(sdServer-5, y, sdNetwork+7, y, "sd-arrow sd-back"), head(sdServer, y, sdNetwork+7, y, "sd-head"),
			sdLabelText(sdNetwork-12, y+6, "end", "sd-note", p.t("diagram.note.unused"), sdNetwork-12-sdMargin, true))
	case a.Fate == "response-lost":
		back.Shapes = append(back.Shapes, line(sdServer-5, y, sdNetwork+12, y, "sd-arrow sd-back"))
		gs := []sdGroup{back, lostMark(sdNetwork, y, p.t("diagram.lost.answer"), false)}
		if a.Status == 0 {
			return append(gs, p.clientNote(y+36)), y + 20
		}
		return gs, y
	case late || a.Status == 0:
		back.Shapes = append(back.Shapes,
			line(sdServer-5, y, sdNetwork, y, "sd-arrow sd-back"), circle(sdNetwork, y, 5, "sd-node"),
			line(sdNetwork, y, sdClient+44, y, "sd-arrow sd-late"),
			text(mid(sdClient, sdNetwork)+10, y-10, "middle", "sd-note", p.t("diagram.note.late")))
		back.Class += " sd-late-answer"
		back.Mark = "late"
	default:
		back.Shapes = append(back.Shapes,
			line(sdServer-5, y, sdClient+7, y, "sd-arrow sd-back"), head(sdServer, y, sdClient+7, y, "sd-head"),
			circle(sdNetwork, y, 5, "sd-node"))
	}
	return []sdGroup{back}, y
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
