package web

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/views"
)

// dgRender renders the sequence diagram of op and parses it back.
func dgRender(t *testing.T, op *sim.Operation) (*goquery.Document, string) {
	t.Helper()
	var b strings.Builder
	if err := views.SequenceDiagram(diagramOf(op)).Render(context.Background(), &b); err != nil {
		t.Fatalf("render: %v", err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc, b.String()
}

func dgPtr[T any](v T) *T { return &v }

func dgDelivery(copy, status int, o sim.Outcome) sim.Delivery {
	return sim.Delivery{Copy: copy, Status: status, Outcome: o}
}

// dgTexts lists the trimmed text of each selected element.
func dgTexts(s *goquery.Selection) []string {
	out := []string{}
	s.Each(func(_ int, e *goquery.Selection) { out = append(out, strings.TrimSpace(e.Text())) })
	return out
}

const dgKey = "3f2a9c1e-7b4d-4e2a-9f10-2c6d8e0b1a55"

func TestDiagramAttempts(t *testing.T) {
	key := dgPtr(dgKey)
	tests := []struct {
		name     string
		attempt  sim.Attempt
		lost     []string // labels of the network's ✕ marks
		commits  int      // COMMIT marks on the database lane
		statuses []string // status labels on answer arrows
		marks    []string // other marks that must be drawn
		sentence string   // a phrase of the text equivalent
	}{
		{
			name:     "ok charged",
			attempt:  sim.Attempt{N: 1, Key: key, Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
			commits:  1,
			statuses: []string{"201"},
			sentence: "Attempt 1, key 3f2a9c1e…: reached the server, which charged the order (COMMIT); the client got 201.",
		},
		{
			name:     "request lost",
			attempt:  sim.Attempt{N: 1, Key: key, Fate: sim.FateRequestLost, Error: dgPtr(sim.ErrRequestLost.Error()), Outcome: sim.OutcomeNotReached, Deliveries: []sim.Delivery{}},
			lost:     []string{"request lost"},
			marks:    []string{"no-answer"},
			sentence: "the network lost the request, so the server never saw it",
		},
		{
			name:     "response lost after the commit",
			attempt:  sim.Attempt{N: 1, Key: key, Fate: sim.FateResponseLost, Error: dgPtr(sim.ErrResponseLost.Error()), Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
			lost:     []string{"answer lost"},
			commits:  1,
			statuses: []string{"201"},
			marks:    []string{"no-answer"},
			sentence: "charged the order (COMMIT); the network lost the answer, so the client got no answer.",
		},
		{
			name:     "slow, the server still working",
			attempt:  sim.Attempt{N: 2, Key: key, Fate: sim.FateSlow, Error: dgPtr(sim.ErrTooSlow.Error()), Outcome: sim.OutcomePending, Deliveries: []sim.Delivery{}},
			marks:    []string{"timeout", "server"},
			sentence: "which is still working; the client timed out before the answer came.",
		},
		{
			name:     "slow, the answer too late",
			attempt:  sim.Attempt{N: 2, Key: key, Fate: sim.FateSlow, Error: dgPtr(sim.ErrTooSlow.Error()), Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
			commits:  1,
			statuses: []string{"201"},
			marks:    []string{"timeout", "late"},
			sentence: "the client timed out before the answer came.",
		},
		{
			name: "duplicate delivery, charged once",
			attempt: sim.Attempt{N: 3, Key: key, Fate: sim.FateDuplicate, Status: 201, Outcome: sim.OutcomeCharged,
				Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged), dgDelivery(2, 200, sim.OutcomeDuplicate)}},
			commits:  1,
			statuses: []string{"201", "200"},
			marks:    []string{"server"},
			sentence: "the network delivered it twice: with copy 1 the server charged the order (COMMIT); with copy 2 the server found the key already used (duplicate); the client got 201.",
		},
		{
			name: "duplicate delivery without protection, charged twice",
			attempt: sim.Attempt{N: 1, Fate: sim.FateDuplicate, Status: 201, Outcome: sim.OutcomeCharged,
				Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged), dgDelivery(2, 201, sim.OutcomeCharged)}},
			commits:  2,
			statuses: []string{"201", "201"},
			sentence: "Attempt 1, no key: the network delivered it twice",
		},
		{
			name:     "duplicate",
			attempt:  sim.Attempt{N: 2, Key: key, Fate: sim.FateOK, Status: 200, Outcome: sim.OutcomeDuplicate, Deliveries: []sim.Delivery{dgDelivery(1, 200, sim.OutcomeDuplicate)}},
			statuses: []string{"200"},
			marks:    []string{"server"},
			sentence: "Attempt 2, key 3f2a9c1e…: reached the server, which found the key already used (duplicate); the client got 200.",
		},
		{
			name:     "replayed",
			attempt:  sim.Attempt{N: 2, Key: key, Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeReplayed, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeReplayed)}},
			statuses: []string{"201"},
			marks:    []string{"server"},
			sentence: "replayed the stored answer",
		},
		{
			name:     "in flight",
			attempt:  sim.Attempt{N: 2, Key: key, Fate: sim.FateOK, Status: 409, Outcome: sim.OutcomeInFlight, Deliveries: []sim.Delivery{dgDelivery(1, 409, sim.OutcomeInFlight)}},
			statuses: []string{"409"},
			marks:    []string{"server"},
			sentence: "still in flight (409); the client got 409.",
		},
		{
			name:     "mismatch",
			attempt:  sim.Attempt{N: 2, Key: key, Fate: sim.FateOK, Status: 422, Outcome: sim.OutcomeMismatch, Deliveries: []sim.Delivery{dgDelivery(1, 422, sim.OutcomeMismatch)}},
			statuses: []string{"422"},
			marks:    []string{"server"},
			sentence: "different body (422)",
		},
		{
			name:     "rejected",
			attempt:  sim.Attempt{N: 1, Fate: sim.FateOK, Status: 400, Outcome: sim.OutcomeRejected, Deliveries: []sim.Delivery{dgDelivery(1, 400, sim.OutcomeRejected)}},
			statuses: []string{"400"},
			marks:    []string{"server"},
			sentence: "Attempt 1, no key: reached the server, which rejected the request (400); the client got 400.",
		},
		{
			name:     "failed",
			attempt:  sim.Attempt{N: 1, Key: key, Fate: sim.FateOK, Status: 500, Outcome: sim.OutcomeFailed, Deliveries: []sim.Delivery{dgDelivery(1, 500, sim.OutcomeFailed)}},
			statuses: []string{"500"},
			marks:    []string{"server"},
			sentence: "which failed; the client got 500.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := &sim.Operation{ID: "op-1", OrderID: "order-42", Amount: 1500, KeyStrategy: sim.KeyUUID, Attempts: []sim.Attempt{tt.attempt}}
			doc, _ := dgRender(t, op)

			attempts := doc.Find("#sequence-diagram svg [data-testid=attempt]")
			if got := attempts.Length(); got != 1 {
				t.Fatalf("attempt elements: got %d, want 1", got)
			}
			if got, want := attempts.AttrOr("data-fate", ""), string(tt.attempt.Fate); got != want {
				t.Errorf("data-fate: got %q, want %q", got, want)
			}
			if got, want := attempts.AttrOr("data-outcome", ""), string(tt.attempt.Outcome); got != want {
				t.Errorf("data-outcome: got %q, want %q", got, want)
			}
			if got, want := attempts.AttrOr("data-n", ""), fmt.Sprint(tt.attempt.N); got != want {
				t.Errorf("data-n: got %q, want %q", got, want)
			}
			lost := dgTexts(attempts.Find("[data-mark=lost] text"))
			if diff := cmp.Diff(tt.lost, lost, dgEmpty); diff != "" {
				t.Errorf("lost marks (-want +got):\n%s", diff)
			}
			commits := attempts.Find("text").FilterFunction(func(_ int, s *goquery.Selection) bool {
				return strings.TrimSpace(s.Text()) == "COMMIT"
			})
			if got := commits.Length(); got != tt.commits {
				t.Errorf("COMMIT labels: got %d, want %d", got, tt.commits)
			}
			if got := attempts.Find("[data-mark=commit]").Length(); got != tt.commits {
				t.Errorf("commit marks: got %d, want %d", got, tt.commits)
			}
			statuses := dgTexts(attempts.Find(".sd-status"))
			if diff := cmp.Diff(tt.statuses, statuses, dgEmpty); diff != "" {
				t.Errorf("status labels (-want +got):\n%s", diff)
			}
			for _, m := range tt.marks {
				if attempts.Find("[data-mark="+m+"]").Length() == 0 {
					t.Errorf("no %q mark", m)
				}
			}
			if got := attempts.Find("[data-mark=request]").Length(); got != 1 {
				t.Errorf("request arrows: got %d, want 1", got)
			}

			items := doc.Find("#sequence-diagram ol.diagram-text > li")
			if got := items.Length(); got != 1 {
				t.Fatalf("text equivalent: got %d items, want 1", got)
			}
			if got := items.Text(); !strings.Contains(got, tt.sentence) {
				t.Errorf("text equivalent: got %q, want it to contain %q", got, tt.sentence)
			}
		})
	}
}

// dgEmpty treats a nil and an empty list as equal.
var dgEmpty = cmp.Transformer("empty", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

func TestDiagramKeyLabels(t *testing.T) {
	op := &sim.Operation{ID: "op-1", OrderID: "order-42", Amount: 1500, Attempts: []sim.Attempt{
		{N: 1, Key: dgPtr(dgKey), Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged},
		{N: 2, Key: dgPtr("order-42"), Fate: sim.FateOK, Status: 200, Outcome: sim.OutcomeDuplicate},
		{N: 3, Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged},
	}}
	doc, _ := dgRender(t, op)
	got := dgTexts(doc.Find("[data-testid=attempt] [data-mark=request] .sd-key"))
	want := []string{"key 3f2a9c1e…", "key order-42", "no key"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("key labels (-want +got):\n%s", diff)
	}
	// The whole key is at hand as the arrow's tooltip.
	if got, want := doc.Find("[data-testid=attempt] [data-mark=request] > title").First().Text(), "Idempotency-Key: "+dgKey; got != want {
		t.Errorf("tooltip: got %q, want %q", got, want)
	}
	// Without deliveries recorded, the attempt's outcome still draws the server's work.
	if got := doc.Find("[data-mark=commit]").Length(); got != 2 {
		t.Errorf("commit marks: got %d, want 2", got)
	}
}

func TestDiagramEscapesUserText(t *testing.T) {
	const (
		key   = `"><img src=x onerror=alert(1)>`
		order = `<script>alert(1)</script>`
		msg   = `<img src=y onerror=alert(2)>`
	)
	op := &sim.Operation{ID: "op-1", OrderID: order, Amount: 1500, KeyStrategy: sim.KeyNatural, Attempts: []sim.Attempt{
		{N: 1, Key: dgPtr(key), Fate: sim.FateRequestLost, Error: dgPtr(msg), Outcome: sim.OutcomeNotReached},
		{N: 2, Key: dgPtr("<b>k</b>"), Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged},
	}}
	doc, html := dgRender(t, op)
	for _, tag := range []string{"img", "script", "b"} {
		if n := doc.Find(tag).Length(); n != 0 {
			t.Errorf("%d <%s> elements made of user text", n, tag)
		}
	}
	for _, raw := range []string{"<img", "<script", "<b>"} {
		if strings.Contains(html, raw) {
			t.Errorf("output holds raw %q", raw)
		}
	}
	if got := doc.Find("figcaption strong").Text(); got != order {
		t.Errorf("order id: got %q, want %q", got, order)
	}
	if got, want := doc.Find("[data-mark=request] > title").First().Text(), "Idempotency-Key: "+key; got != want {
		t.Errorf("key tooltip: got %q, want %q", got, want)
	}
	if got, want := doc.Find("[data-mark=request] .sd-key").First().Text(), `key "><img s…`; got != want {
		t.Errorf("key label: got %q, want %q", got, want)
	}
}

func TestDiagramEmpty(t *testing.T) {
	doc, _ := dgRender(t, nil)
	fig := doc.Find("figure#sequence-diagram[data-testid=sequence-diagram]")
	if fig.Length() != 1 {
		t.Fatal("no sequence-diagram figure")
	}
	if n := fig.Find("[data-testid=attempt]").Length(); n != 0 {
		t.Errorf("attempt elements: got %d, want 0", n)
	}
	if n := fig.Find("li").Length(); n != 0 {
		t.Errorf("text items: got %d, want 0", n)
	}
	if got := fig.Find(".diagram-empty").Text(); got != "No operation yet: fire a charge." {
		t.Errorf("empty state: got %q", got)
	}
	if n := fig.Find("svg[role=img] title, svg[role=img] desc").Length(); n != 2 {
		t.Errorf("svg title and desc: got %d elements, want 2", n)
	}
}

func TestDiagramShowsTheLast12(t *testing.T) {
	op := &sim.Operation{ID: "op-1", OrderID: "order-42", Amount: 1500, KeyStrategy: sim.KeyUUID}
	for n := 1; n <= 20; n++ {
		op.Attempts = append(op.Attempts, sim.Attempt{N: n, Key: dgPtr(dgKey), Fate: sim.FateOK, Status: 200, Outcome: sim.OutcomeDuplicate,
			Deliveries: []sim.Delivery{dgDelivery(1, 200, sim.OutcomeDuplicate)}})
	}
	doc, _ := dgRender(t, op)
	attempts := doc.Find("[data-testid=attempt]")
	if got := attempts.Length(); got != 12 {
		t.Fatalf("attempt elements: got %d, want 12", got)
	}
	if got, want := attempts.First().AttrOr("data-n", ""), "9"; got != want {
		t.Errorf("first attempt shown: got %s, want %s", got, want)
	}
	if got, want := attempts.Last().AttrOr("data-n", ""), "20"; got != want {
		t.Errorf("last attempt shown: got %s, want %s", got, want)
	}
	if got := doc.Find(".diagram-note").Text(); !strings.Contains(got, "last 12 of 20") {
		t.Errorf("note: got %q, want it to say the last 12 of 20", got)
	}
	if got := doc.Find("desc").Text(); !strings.Contains(got, "last 12 of 20") {
		t.Errorf("svg desc: got %q, want it to say the last 12 of 20", got)
	}
	if got := doc.Find("ol.diagram-text > li").Length(); got != 12 {
		t.Errorf("text items: got %d, want 12", got)
	}
}

func TestDiagramOf(t *testing.T) {
	if diff := cmp.Diff(views.Diagram{}, diagramOf(nil)); diff != "" {
		t.Errorf("nil operation (-want +got):\n%s", diff)
	}
	op := &sim.Operation{ID: "op-1", OrderID: "order-42", Amount: 1500, KeyStrategy: sim.KeyUUID, Attempts: []sim.Attempt{
		{N: 1, Key: dgPtr("k1"), Fate: sim.FateResponseLost, Error: dgPtr("lost"), Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
		{N: 2, Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged},
	}}
	want := views.Diagram{OperationID: "op-1", OrderID: "order-42", Amount: 1500, KeyStrategy: "uuid", Attempts: []views.DiagramAttempt{
		{N: 1, Key: "k1", HasKey: true, Fate: "response-lost", Error: "lost", Outcome: "charged", Deliveries: []views.DiagramDelivery{{Copy: 1, Status: 201, Outcome: "charged"}}},
		{N: 2, Fate: "ok", Status: 201, Outcome: "charged", Deliveries: []views.DiagramDelivery{}},
	}}
	if diff := cmp.Diff(want, diagramOf(op)); diff != "" {
		t.Errorf("diagramOf (-want +got):\n%s", diff)
	}
}
