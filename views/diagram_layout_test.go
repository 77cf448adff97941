package views

import "testing"

// The lanes stand evenly, their names in one type size in both languages,
// and the words of a lost mark never cross a lifeline: the answer's stay
// between the client's and the network's, the request's between the
// network's and the server's.
func TestDiagramLanesAndLostMarks(t *testing.T) {
	d := Diagram{OperationID: "op-1", OrderID: "order-42", Amount: 1500, KeyStrategy: "uuid", Attempts: []DiagramAttempt{
		{N: 1, Key: "k", HasKey: true, Fate: "response-lost", Outcome: "charged", Deliveries: []DiagramDelivery{{Copy: 1, Status: 201, Outcome: "charged"}}},
		{N: 2, Key: "k", HasKey: true, Fate: "request-lost", Outcome: "not-reached"},
	}}
	for _, lang := range Langs {
		l := layoutDiagram(d, lang)
		for i, lane := range l.Lanes {
			if lane.Class != "sd-lane" {
				t.Errorf("%s: the %s lane is set in another size (%q)", lang, lane.Name, lane.Class)
			}
			if i > 0 {
				if gap, first := lane.X-l.Lanes[i-1].X, l.Lanes[1].X-l.Lanes[0].X; gap != first {
					t.Errorf("%s: lanes %d and %d are %v apart, the first two %v", lang, i-1, i, gap, first)
				}
				if lane.X-lane.W/2 < l.Lanes[i-1].X+l.Lanes[i-1].W/2 {
					t.Errorf("%s: the heads of %s and %s overlap", lang, l.Lanes[i-1].Name, lane.Name)
				}
			}
		}
		marks := 0
		for _, r := range l.Rows {
			for _, g := range r.Groups {
				if g.Mark != "lost" {
					continue
				}
				marks++
				for _, s := range g.Shapes {
					if s.Kind != sdText {
						continue
					}
					w := sdLinesWidth(s.Lines, sdLabel)
					x0, x1 := s.X, s.X+w
					if s.Anchor == "end" {
						x0, x1 = s.X-w, s.X
					}
					lo, hi := sdClient, sdNetwork // an answer lost, left of the ✕
					if s.Anchor == "start" {
						lo, hi = sdNetwork, sdServer // a request lost, right of it
					}
					if x0 <= lo || x1 >= hi {
						t.Errorf("%s: %q spans %.1f–%.1f, across a lifeline (%v, %v)", lang, s.Lines, x0, x1, lo, hi)
					}
				}
			}
		}
		if marks != 2 {
			t.Errorf("%s: %d lost marks drawn, want 2", lang, marks)
		}
	}
}
