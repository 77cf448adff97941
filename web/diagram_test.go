package web

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/sim/client"
	"idemlab/views"
)

// dgLangs are the languages every diagram test renders in.
var dgLangs = []views.Lang{views.English, views.Russian}

// dgRenderLang renders the sequence diagram of op in lang.
func dgRenderLang(t *testing.T, lang views.Lang, op *sim.Operation) (*goquery.Document, string) {
	t.Helper()
	return dgRenderIn(t, views.WithLang(context.Background(), lang), op)
}

func dgRenderIn(t *testing.T, ctx context.Context, op *sim.Operation) (*goquery.Document, string) {
	t.Helper()
	var b strings.Builder
	if err := views.SequenceDiagram(diagramOf(op)).Render(ctx, &b); err != nil {
		t.Fatalf("render: %v", err)
	}
	html := b.String()
	if i := strings.Index(html, "[diagram."); i >= 0 {
		t.Errorf("a key missing from the catalogs: %q", html[i:min(len(html), i+60)])
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc, html
}

func dgPtr[T any](v T) *T { return &v }

func dgDelivery(copy, status int, o sim.Outcome) sim.Delivery {
	return sim.Delivery{Copy: copy, Status: status, Outcome: o}
}

// dgTexts lists the text of each selected element, its lines (an SVG
// label's tspans) joined by a space and its spaces collapsed.
func dgTexts(s *goquery.Selection) []string {
	out := []string{}
	s.Each(func(_ int, e *goquery.Selection) { out = append(out, dgText(e)) })
	return out
}

func dgText(e *goquery.Selection) string {
	if spans := e.Find("tspan"); spans.Length() > 0 {
		return strings.Join(dgTexts(spans), " ")
	}
	return strings.Join(strings.Fields(e.Text()), " ")
}

const dgKey = "3f2a9c1e-7b4d-4e2a-9f10-2c6d8e0b1a55"

// dgStory is an operation with an attempt of every kind the diagram draws.
func dgStory() *sim.Operation {
	key := dgPtr(dgKey)
	errLost, errSlow := dgPtr(client.ErrResponseLost.Error()), dgPtr(client.ErrTooSlow.Error())
	return &sim.Operation{ID: "op-7", OrderID: "order-42", Amount: 1500, KeyStrategy: sim.KeyUUID, Attempts: []sim.Attempt{
		{N: 1, Key: key, Fate: sim.FateResponseLost, Error: errLost, Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
		{N: 2, Key: key, Fate: sim.FateOK, Status: 200, Outcome: sim.OutcomeDuplicate, Deliveries: []sim.Delivery{dgDelivery(1, 200, sim.OutcomeDuplicate)}},
		{N: 3, Key: key, Fate: sim.FateDuplicate, Status: 201, Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged), dgDelivery(2, 200, sim.OutcomeDuplicate)}},
		{N: 4, Key: key, Fate: sim.FateSlow, Error: errSlow, Outcome: sim.OutcomePending, Deliveries: []sim.Delivery{}},
		{N: 5, Key: key, Fate: sim.FateSlow, Error: errSlow, Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
		{N: 6, Key: key, Fate: sim.FateRequestLost, Error: dgPtr(client.ErrRequestLost.Error()), Outcome: sim.OutcomeNotReached, Deliveries: []sim.Delivery{}},
		{N: 7, Key: key, Fate: sim.FateOK, Status: 409, Outcome: sim.OutcomeInFlight, Deliveries: []sim.Delivery{dgDelivery(1, 409, sim.OutcomeInFlight)}},
		{N: 8, Key: key, Fate: sim.FateOK, Status: 422, Outcome: sim.OutcomeMismatch, Deliveries: []sim.Delivery{dgDelivery(1, 422, sim.OutcomeMismatch)}},
		{N: 9, Fate: sim.FateOK, Status: 400, Outcome: sim.OutcomeRejected, Deliveries: []sim.Delivery{dgDelivery(1, 400, sim.OutcomeRejected)}},
		{N: 10, Key: key, Fate: sim.FateOK, Status: 500, Outcome: sim.OutcomeFailed, Deliveries: []sim.Delivery{dgDelivery(1, 500, sim.OutcomeFailed)}},
		{N: 11, Key: key, Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeReplayed, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeReplayed)}},
		{N: 12, Fate: sim.FateDuplicate, Status: 201, Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged), dgDelivery(2, 201, sim.OutcomeCharged)}},
	}}
}

// dgLatin are the words in Latin letters.
var dgLatin = regexp.MustCompile(`[A-Za-z]+`)

// dgNoEnglish fails when the Russian diagram doc says a word in Latin
// letters other than COMMIT (SQL), UUID (as the article writes it in
// Russian) and the words of the keys, order id and operation id that op
// carries. It lists whether the English rendering says the word too.
func dgNoEnglish(t *testing.T, doc *goquery.Document, op *sim.Operation) {
	t.Helper()
	allowed := map[string]bool{"COMMIT": true, "UUID": true}
	english := map[string]bool{}
	if op != nil {
		for _, s := range []string{op.ID, op.OrderID} {
			for _, w := range dgLatin.FindAllString(s, -1) {
				allowed[w] = true
			}
		}
		for _, a := range op.Attempts {
			if a.Key != nil {
				for _, w := range dgLatin.FindAllString(*a.Key, -1) {
					allowed[w] = true
				}
			}
		}
		enDoc, _ := dgRenderLang(t, views.English, op)
		for _, s := range dgTextNodes(enDoc.Selection) {
			for _, w := range dgLatin.FindAllString(s, -1) {
				english[w] = true
			}
		}
	}
	for _, s := range dgTextNodes(doc.Selection) {
		for _, w := range dgLatin.FindAllString(s, -1) {
			if !allowed[w] {
				t.Errorf("Russian diagram says %q (English rendering says it too: %v) in %q", w, english[w], s)
			}
		}
	}
}

// dgTextNodes are the texts of every text node in sel: what the page shows
// and says, tooltips and the SVG's title and description included.
func dgTextNodes(sel *goquery.Selection) []string {
	var out []string
	sel.Find("*").Contents().Each(func(_ int, n *goquery.Selection) {
		if goquery.NodeName(n) == "#text" {
			if s := strings.TrimSpace(n.Text()); s != "" {
				out = append(out, s)
			}
		}
	})
	return out
}

func TestDiagramOf(t *testing.T) {
	t.Parallel()
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
