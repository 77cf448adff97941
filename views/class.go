package views

import "strings"

// ClassView is the class on a lab, as the projector shows it.
type ClassView struct {
	On      bool // a class runs
	Ended   bool // the lab had a class, which ended
	Code    string
	JoinURL string
	QR      string // the address of the join address's QR code (SVG)
	Screen  string // the address of the join screen (JoinScreen)
	Local   bool   // the join address is this computer's own: phones cannot reach it
	CanAsk  bool   // the lesson's next step has a question
	Asked   int
	Q       *QuestionView // the latest question
}

// QuestionView is a class's question: on the projector, the votes' count
// until the reveal and their split after; on a phone, never the count.
type QuestionView struct {
	N       int
	About   Msg // the step, in words
	Text    Msg // the question
	State   string
	Votes   int
	Choices []ChoiceView
	Right   string // once revealed: the right choice's code, "" none
	Share   int    // once revealed: the percent of votes that were right
	Seen    Msg    // once revealed: what the step did
	Mine    string // on a phone: the voter's choice
}

// ChoiceView is one choice of a question.
type ChoiceView struct {
	Code    string
	Letter  string // A, B, C, D
	Label   Msg
	Count   int // once revealed
	Percent int // once revealed
}

// Open reports whether the question takes votes.
func (q *QuestionView) Open() bool { return q != nil && q.State == "open" }

// Revealed reports whether the step ran and the answer is shown.
func (q *QuestionView) Revealed() bool { return q != nil && q.State == "revealed" }

// IsRight reports whether c is the right choice of a revealed question.
func (q *QuestionView) IsRight(c ChoiceView) bool { return q.Revealed() && q.Right == c.Code }

// MineLabel is the label of the phone's vote.
func (q *QuestionView) MineLabel() Msg {
	for _, c := range q.Choices {
		if c.Code == q.Mine {
			return c.Label
		}
	}
	return Msg{}
}

// JoinPage is a student's phone page of a class.
type JoinPage struct {
	Code    string
	Version string // what the page shows: a poll that finds it unchanged swaps nothing
	Q       *QuestionView
	Notice  Msg  // why the last vote was refused
	Gone    bool // no class has this code (any more)
}

// Self is the page's address.
func (p JoinPage) Self() string { return "/join/" + p.Code }

// JoinURLPieces is the join address in the pieces a line may end between:
// its origin, the path up to the code, the code. On a narrow panel the
// address then wraps before the code, never inside it. An address of
// another shape is its first piece alone.
func (c ClassView) JoinURLPieces() (origin, path, code string) {
	u := c.JoinURL
	last := strings.LastIndexByte(u, '/')
	if last <= 0 {
		return u, "", ""
	}
	before := strings.LastIndexByte(u[:last], '/')
	if before <= 0 || u[before-1] == '/' { // no path before the code: "scheme://host/code"
		return u[:last+1], "", u[last+1:]
	}
	return u[:before], u[before : last+1], u[last+1:]
}
