package views

import (
	"context"
	"strings"
	"testing"
)

// The queue's lanes have heads as the drawing's top ones do: a lane whose
// name its box shortens (the mailbox's) gives its full name as a tooltip.
func TestQueueLaneHeadsSayTheirFullNames(t *testing.T) {
	d := Diagram{OperationID: "op-1", OrderID: "order-42", Amount: 1500, Attempts: []DiagramAttempt{
		{N: 1, Fate: "ok", Outcome: "charged", Deliveries: []DiagramDelivery{{Copy: 1, Status: 201, Outcome: "charged"}}},
	}, Messages: []DiagramMessage{{Published: 1, Deliveries: []DiagramMessageDelivery{{N: 1, Outcome: "sent"}}}}}
	for lang, full := range map[Lang]string{English: "mailbox", Russian: "почтовый ящик"} {
		var b strings.Builder
		if err := SequenceDiagram(d).Render(WithLang(context.Background(), lang), &b); err != nil {
			t.Fatal(err)
		}
		html := b.String()
		part := html[strings.LastIndex(html, `class="sd-lanes"`)+1:] // the queue's, under the attempts
		if !strings.Contains(part, `class="sd-lane-head"`) || !strings.Contains(part, "<title>"+full+"</title>") {
			t.Errorf("%s: the queue's lanes do not name the %q lane in full:\n%.600s", lang, full, part)
		}
	}
}
