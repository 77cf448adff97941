package views

// The drawing the template receives: its coordinate system, the layout with
// its lanes and rows, and the groups of shapes in them.

// The drawing: a fixed-width coordinate system whose height grows with the
// attempts. The width is small on purpose: scaled to a 375 px phone the
// labels stay readable, and on a projector they become large. The lanes
// stand evenly, as far apart as "потерялся", the widest word of a lost
// mark, needs between two lifelines.
const (
	sdWidth       = 440.0
	sdClient      = 55.0
	sdNetwork     = 165.0
	sdServer      = 275.0
	sdDatabase    = 385.0
	sdHeadRoom    = 56.0 // the lane heads
	sdHeadsHeight = 50.0 // the heads' own drawing, kept in view (diagram.templ)
	sdMaxShown    = 12   // attempts drawn; older ones are summarised
	sdMargin      = 4.0  // kept free at the drawing's edges
	sdLaneGap     = 6.0  // between two lane heads
	sdLaneFont    = 17.0 // .sd-lane
	sdLabel       = 16.0 // .sd-label, .sd-note, .sd-key, .sd-server-label
	sdLineStep    = 1.2  // em between the lines of one label
)

// sdLane is one lane's head: its name, the name in full when the head shows
// a short one, where it stands and how wide its box is.
type sdLane struct {
	Name, Full string
	Class      string
	X, W       float64
	Y          float64 // the head's top: 6, or where the queue's part starts
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
	StepsY       float64   // where a stepped race's statements start; 0 for none
	Steps        []sdGroup // its statements
	QueueY       float64   // where the queue's part starts; 0 for none
	QueueLanes   []sdLane  // its lanes
	Queue        []sdGroup // its rows
	// The caption: the words before and after the order id, which the
	// template sets in bold, and the key strategy in words.
	Before, After, Strategy string
}

// pinned is how far down the lanes are the attempts' lanes, whose heads
// stay in view while the drawing scrolls: to the end, or to the space
// before the queue's part, which has lanes of its own.
func (l sdLayout) pinned() float64 {
	if l.QueueY > 0 {
		return l.QueueY - 8
	}
	return l.Height
}

// sdPainter lays out a diagram in one language.
type sdPainter struct{ l Lang }
