package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// dgWords is what one language says of an attempt.
type dgWords struct {
	lost     []string // labels of the network's ✕ marks
	sentence string   // a phrase of the text equivalent
}

func TestDiagramAttempts(t *testing.T) {
	t.Parallel()
	key := dgPtr(dgKey)
	tests := []struct {
		name     string
		attempt  sim.Attempt
		commits  int      // COMMIT marks on the database lane
		statuses []string // status labels on answer arrows
		marks    []string // other marks that must be drawn
		en, ru   dgWords
	}{
		{
			name:     "ok charged",
			attempt:  sim.Attempt{N: 1, Key: key, Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
			commits:  1,
			statuses: []string{"201"},
			en:       dgWords{sentence: "Attempt 1, key 3f2a9c1e…: reached the server, which charged the order (COMMIT); the client got 201."},
			ru:       dgWords{sentence: "Попытка 1, ключ 3f2a9c1e…: запрос дошёл до сервера, и тот списал деньги (COMMIT); клиент получил 201."},
		},
		{
			name:    "request lost",
			attempt: sim.Attempt{N: 1, Key: key, Fate: sim.FateRequestLost, Error: dgPtr(client.ErrRequestLost.Error()), Outcome: sim.OutcomeNotReached, Deliveries: []sim.Delivery{}},
			marks:   []string{"no-answer"},
			en:      dgWords{[]string{"request lost"}, "the network lost the request, so the server never saw it"},
			ru:      dgWords{[]string{"запрос потерялся"}, "сеть потеряла запрос, и сервер его не увидел; клиент не получил ответа."},
		},
		{
			name:     "response lost after the commit",
			attempt:  sim.Attempt{N: 1, Key: key, Fate: sim.FateResponseLost, Error: dgPtr(client.ErrResponseLost.Error()), Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
			commits:  1,
			statuses: []string{"201"},
			marks:    []string{"no-answer"},
			en:       dgWords{[]string{"answer lost"}, "charged the order (COMMIT); the network lost the answer, so the client got no answer."},
			ru:       dgWords{[]string{"ответ потерялся"}, "списал деньги (COMMIT); сеть потеряла ответ, и клиент ничего не получил."},
		},
		{
			name:    "slow, the server still working",
			attempt: sim.Attempt{N: 2, Key: key, Fate: sim.FateSlow, Error: dgPtr(client.ErrTooSlow.Error()), Outcome: sim.OutcomePending, Deliveries: []sim.Delivery{}},
			marks:   []string{"timeout", "server"},
			en:      dgWords{sentence: "which is still working; the client timed out before the answer came."},
			ru:      dgWords{sentence: "и тот ещё работает; клиент не дождался ответа: истёк таймаут."},
		},
		{
			name:     "slow, the answer too late",
			attempt:  sim.Attempt{N: 2, Key: key, Fate: sim.FateSlow, Error: dgPtr(client.ErrTooSlow.Error()), Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
			commits:  1,
			statuses: []string{"201"},
			marks:    []string{"timeout", "late"},
			en:       dgWords{sentence: "the client timed out before the answer came."},
			ru:       dgWords{sentence: "клиент не дождался ответа: истёк таймаут."},
		},
		{
			name: "duplicate delivery, charged once",
			attempt: sim.Attempt{N: 3, Key: key, Fate: sim.FateDuplicate, Status: 201, Outcome: sim.OutcomeCharged,
				Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged), dgDelivery(2, 200, sim.OutcomeDuplicate)}},
			commits:  1,
			statuses: []string{"201", "200"},
			marks:    []string{"server"},
			en:       dgWords{sentence: "the network delivered it twice: with copy 1 the server charged the order (COMMIT); with copy 2 the server found the key already used (duplicate); the client got 201."},
			ru:       dgWords{sentence: "сеть доставила запрос дважды: получив копию 1, сервер списал деньги (COMMIT); получив копию 2, сервер увидел, что ключ уже использован (дубликат); клиент получил 201."},
		},
		{
			name: "duplicate delivery without protection, charged twice",
			attempt: sim.Attempt{N: 1, Fate: sim.FateDuplicate, Status: 201, Outcome: sim.OutcomeCharged,
				Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged), dgDelivery(2, 201, sim.OutcomeCharged)}},
			commits:  2,
			statuses: []string{"201", "201"},
			en:       dgWords{sentence: "Attempt 1, no key: the network delivered it twice"},
			ru:       dgWords{sentence: "Попытка 1, без ключа: сеть доставила запрос дважды"},
		},
		{
			name:     "duplicate",
			attempt:  sim.Attempt{N: 2, Key: key, Fate: sim.FateOK, Status: 200, Outcome: sim.OutcomeDuplicate, Deliveries: []sim.Delivery{dgDelivery(1, 200, sim.OutcomeDuplicate)}},
			statuses: []string{"200"},
			marks:    []string{"server"},
			en:       dgWords{sentence: "Attempt 2, key 3f2a9c1e…: reached the server, which found the key already used (duplicate); the client got 200."},
			ru:       dgWords{sentence: "Попытка 2, ключ 3f2a9c1e…: запрос дошёл до сервера, и тот увидел, что ключ уже использован (дубликат); клиент получил 200."},
		},
		{
			name:     "replayed",
			attempt:  sim.Attempt{N: 2, Key: key, Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeReplayed, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeReplayed)}},
			statuses: []string{"201"},
			marks:    []string{"server"},
			en:       dgWords{sentence: "replayed the stored answer"},
			ru:       dgWords{sentence: "повторил сохранённый ответ первого запроса"},
		},
		{
			name:     "in flight",
			attempt:  sim.Attempt{N: 2, Key: key, Fate: sim.FateOK, Status: 409, Outcome: sim.OutcomeInFlight, Deliveries: []sim.Delivery{dgDelivery(1, 409, sim.OutcomeInFlight)}},
			statuses: []string{"409"},
			marks:    []string{"server"},
			en:       dgWords{sentence: "still in flight (409); the client got 409."},
			ru:       dgWords{sentence: "ещё выполняется (409); клиент получил 409."},
		},
		{
			name:     "mismatch",
			attempt:  sim.Attempt{N: 2, Key: key, Fate: sim.FateOK, Status: 422, Outcome: sim.OutcomeMismatch, Deliveries: []sim.Delivery{dgDelivery(1, 422, sim.OutcomeMismatch)}},
			statuses: []string{"422"},
			marks:    []string{"server"},
			en:       dgWords{sentence: "different body (422)"},
			ru:       dgWords{sentence: "другим телом запроса (422)"},
		},
		{
			name:     "rejected",
			attempt:  sim.Attempt{N: 1, Fate: sim.FateOK, Status: 400, Outcome: sim.OutcomeRejected, Deliveries: []sim.Delivery{dgDelivery(1, 400, sim.OutcomeRejected)}},
			statuses: []string{"400"},
			marks:    []string{"server"},
			en:       dgWords{sentence: "Attempt 1, no key: reached the server, which rejected the request (400); the client got 400."},
			ru:       dgWords{sentence: "Попытка 1, без ключа: запрос дошёл до сервера, и тот отклонил запрос (400); клиент получил 400."},
		},
		{
			name:     "failed",
			attempt:  sim.Attempt{N: 1, Key: key, Fate: sim.FateOK, Status: 500, Outcome: sim.OutcomeFailed, Deliveries: []sim.Delivery{dgDelivery(1, 500, sim.OutcomeFailed)}},
			statuses: []string{"500"},
			marks:    []string{"server"},
			en:       dgWords{sentence: "which failed; the client got 500."},
			ru:       dgWords{sentence: "и тот ответил ошибкой; клиент получил 500."},
		},
	}
	for _, tt := range tests {
		for _, lang := range dgLangs {
			words := tt.en
			if lang == views.Russian {
				words = tt.ru
			}
			t.Run(tt.name+"/"+string(lang), func(t *testing.T) {
				op := &sim.Operation{ID: "op-1", OrderID: "order-42", Amount: 1500, KeyStrategy: sim.KeyUUID, Attempts: []sim.Attempt{tt.attempt}}
				doc, _ := dgRenderLang(t, lang, op)

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
				if diff := cmp.Diff(words.lost, lost, dgEmpty); diff != "" {
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
				if got := items.Text(); !strings.Contains(got, words.sentence) {
					t.Errorf("text equivalent: got %q, want it to contain %q", got, words.sentence)
				}
				if lang == views.Russian {
					dgNoEnglish(t, doc, op)
				}
			})
		}
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
	t.Parallel()
	op := &sim.Operation{ID: "op-1", OrderID: "order-42", Amount: 1500, Attempts: []sim.Attempt{
		{N: 1, Key: dgPtr(dgKey), Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged},
		{N: 2, Key: dgPtr("order-42"), Fate: sim.FateOK, Status: 200, Outcome: sim.OutcomeDuplicate},
		{N: 3, Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged},
	}}
	for _, tc := range []struct {
		lang   views.Lang
		labels []string
		tip    string
	}{
		{views.English, []string{"key 3f2a9c1e…", "key order-42", "no key"}, "Idempotency-Key: "},
		{views.Russian, []string{"ключ 3f2a9c1e…", "ключ order-42", "без ключа"}, "Ключ идемпотентности: "},
	} {
		t.Run(string(tc.lang), func(t *testing.T) {
			doc, _ := dgRenderLang(t, tc.lang, op)
			got := dgTexts(doc.Find("[data-testid=attempt] [data-mark=request] .sd-key"))
			if diff := cmp.Diff(tc.labels, got); diff != "" {
				t.Errorf("key labels (-want +got):\n%s", diff)
			}
			// The whole key is at hand as the arrow's tooltip.
			if got, want := doc.Find("[data-testid=attempt] [data-mark=request] > title").First().Text(), tc.tip+dgKey; got != want {
				t.Errorf("tooltip: got %q, want %q", got, want)
			}
			// Without deliveries recorded, the attempt's outcome still draws the server's work.
			if got := doc.Find("[data-mark=commit]").Length(); got != 2 {
				t.Errorf("commit marks: got %d, want 2", got)
			}
			if tc.lang == views.Russian {
				dgNoEnglish(t, doc, op)
			}
		})
	}
}

func TestDiagramEscapesUserText(t *testing.T) {
	t.Parallel()
	const (
		key   = `"><img src=x onerror=alert(1)>`
		order = `<script>alert(1)</script>`
		msg   = `<img src=y onerror=alert(2)>`
	)
	op := &sim.Operation{ID: "op-1", OrderID: order, Amount: 1500, KeyStrategy: sim.KeyNatural, Attempts: []sim.Attempt{
		{N: 1, Key: dgPtr(key), Fate: sim.FateRequestLost, Error: dgPtr(msg), Outcome: sim.OutcomeNotReached},
		{N: 2, Key: dgPtr("<b>k</b>"), Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged},
	}}
	for _, tc := range []struct {
		lang     views.Lang
		tip, key string
	}{
		{views.English, "Idempotency-Key: ", "key "},
		{views.Russian, "Ключ идемпотентности: ", "ключ "},
	} {
		t.Run(string(tc.lang), func(t *testing.T) {
			doc, html := dgRenderLang(t, tc.lang, op)
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
			if got, want := doc.Find("[data-mark=request] > title").First().Text(), tc.tip+key; got != want {
				t.Errorf("key tooltip: got %q, want %q", got, want)
			}
			if got, want := doc.Find("[data-mark=request] .sd-key").First().Text(), tc.key+`"><img s…`; got != want {
				t.Errorf("key label: got %q, want %q", got, want)
			}
		})
	}
}

func TestDiagramEmpty(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lang                  views.Lang
		caption, empty, title string
	}{
		{views.English, "Sequence diagram", "No operation yet: fire a charge.", "Sequence diagram: no operation yet"},
		{views.Russian, "Диаграмма последовательности", "Операций ещё нет: сделайте списание.", "Диаграмма последовательности: операций ещё нет"},
	} {
		t.Run(string(tc.lang), func(t *testing.T) {
			doc, _ := dgRenderLang(t, tc.lang, nil)
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
			if got := fig.Find(".diagram-empty").Text(); got != tc.empty {
				t.Errorf("empty state: got %q, want %q", got, tc.empty)
			}
			if got := dgText(fig.Find("figcaption")); got != tc.caption {
				t.Errorf("caption: got %q, want %q", got, tc.caption)
			}
			if n := fig.Find("svg[role=img] > title, svg[role=img] > desc").Length(); n != 2 {
				t.Errorf("svg title and desc: got %d elements, want 2", n)
			}
			if got := fig.Find("svg > title").Text(); got != tc.title {
				t.Errorf("svg title: got %q, want %q", got, tc.title)
			}
			if got := dgTexts(fig.Find(".sd-lane")); len(got) != 4 {
				t.Errorf("lane names: got %q, want 4", got)
			}
			if tc.lang == views.Russian {
				dgNoEnglish(t, doc, nil)
			}
		})
	}
}

func TestDiagramShowsTheLast12(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lang  views.Lang
		total int
		note  string
	}{
		{views.English, 20, "Showing the last 12 of 20 attempts."},
		{views.Russian, 20, "Показаны последние 12 из 20 попыток."},
		{views.Russian, 21, "Показаны последние 12 из 21 попытки."},
	} {
		t.Run(fmt.Sprint(tc.lang, tc.total), func(t *testing.T) {
			op := &sim.Operation{ID: "op-1", OrderID: "order-42", Amount: 1500, KeyStrategy: sim.KeyUUID}
			for n := 1; n <= tc.total; n++ {
				op.Attempts = append(op.Attempts, sim.Attempt{N: n, Key: dgPtr(dgKey), Fate: sim.FateOK, Status: 200, Outcome: sim.OutcomeDuplicate,
					Deliveries: []sim.Delivery{dgDelivery(1, 200, sim.OutcomeDuplicate)}})
			}
			doc, _ := dgRenderLang(t, tc.lang, op)
			attempts := doc.Find("[data-testid=attempt]")
			if got := attempts.Length(); got != 12 {
				t.Fatalf("attempt elements: got %d, want 12", got)
			}
			if got, want := attempts.First().AttrOr("data-n", ""), fmt.Sprint(tc.total-11); got != want {
				t.Errorf("first attempt shown: got %s, want %s", got, want)
			}
			if got, want := attempts.Last().AttrOr("data-n", ""), fmt.Sprint(tc.total); got != want {
				t.Errorf("last attempt shown: got %s, want %s", got, want)
			}
			if got := doc.Find(".diagram-note").Text(); got != tc.note {
				t.Errorf("note: got %q, want %q", got, tc.note)
			}
			if got := doc.Find("desc").Text(); !strings.Contains(got, tc.note) {
				t.Errorf("svg desc: got %q, want it to contain %q", got, tc.note)
			}
			if got := doc.Find("ol.diagram-text > li").Length(); got != 12 {
				t.Errorf("text items: got %d, want 12", got)
			}
			if tc.lang == views.Russian {
				dgNoEnglish(t, doc, op)
			}
		})
	}
}

// TestDiagramCaption checks the words around the order id, the amount, the
// key strategy in words and the SVG's title and description, with the
// counted words in their forms.
func TestDiagramCaption(t *testing.T) {
	t.Parallel()
	op := dgStory()
	for _, tc := range []struct {
		lang                 views.Lang
		caption, title, desc string
	}{
		{views.English,
			"Charge order-42 ₽1,500 · key strategy: one UUID per operation · op-7",
			"Sequence diagram of the charge of order-42, ₽1,500",
			"12 attempts across the lanes client, network, server and database; 5 charges committed. The list below tells each attempt in words."},
		{views.Russian,
			"Списание 1 500 ₽ за заказ order-42 · ключ идемпотентности: один UUID на операцию · op-7",
			"Диаграмма последовательности: списание 1\u00a0500\u00a0₽ за заказ order-42",
			"Дорожки: клиент, сеть, сервер и база данных. 12 попыток; записано в базу: 5 списаний. Ниже каждая попытка описана словами."},
	} {
		t.Run(string(tc.lang), func(t *testing.T) {
			doc, _ := dgRenderLang(t, tc.lang, op)
			if got := dgText(doc.Find("figcaption")); got != tc.caption {
				t.Errorf("caption: got %q, want %q", got, tc.caption)
			}
			if got := doc.Find("figcaption strong").Text(); got != "order-42" {
				t.Errorf("order id in bold: got %q", got)
			}
			if got := doc.Find("[data-key-strategy]").AttrOr("data-key-strategy", ""); got != "uuid" {
				t.Errorf("data-key-strategy: got %q, want uuid", got)
			}
			if got := doc.Find("svg > title").Text(); got != tc.title {
				t.Errorf("svg title: got %q, want %q", got, tc.title)
			}
			if got := doc.Find("svg > desc").Text(); got != tc.desc {
				t.Errorf("svg desc: got %q, want %q", got, tc.desc)
			}
			if got := doc.Find("ol.diagram-text > li").Length(); got != len(op.Attempts) {
				t.Errorf("text items: got %d, want %d", got, len(op.Attempts))
			}
		})
	}
}

func TestDiagramPlural(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n                 int
		attempts, charges string
		of                string // after «из»
	}{
		{0, "0 попыток", "0 списаний", "0 попыток"},
		{1, "1 попытка", "1 списание", "1 попытки"},
		{2, "2 попытки", "2 списания", "2 попыток"},
		{4, "4 попытки", "4 списания", "4 попыток"},
		{5, "5 попыток", "5 списаний", "5 попыток"},
		{11, "11 попыток", "11 списаний", "11 попыток"},
		{12, "12 попыток", "12 списаний", "12 попыток"},
		{14, "14 попыток", "14 списаний", "14 попыток"},
		{21, "21 попытка", "21 списание", "21 попытки"},
		{22, "22 попытки", "22 списания", "22 попыток"},
		{25, "25 попыток", "25 списаний", "25 попыток"},
		{101, "101 попытка", "101 списание", "101 попытки"},
		{111, "111 попыток", "111 списаний", "111 попыток"},
		{112, "112 попыток", "112 списаний", "112 попыток"},
		{122, "122 попытки", "122 списания", "122 попыток"},
	} {
		for key, want := range map[string]string{"diagram.n.attempts": tc.attempts, "diagram.n.charges": tc.charges, "diagram.n.of-attempts": tc.of} {
			if got := views.DiagramCount(views.Russian, key, tc.n); got != want {
				t.Errorf("DiagramCount(ru, %s, %d) = %q, want %q", key, tc.n, got, want)
			}
		}
	}
	for n, want := range map[int]string{0: "0 attempts", 1: "1 attempt", 2: "2 attempts", 21: "21 attempts"} {
		if got := views.DiagramCount(views.English, "diagram.n.attempts", n); got != want {
			t.Errorf("DiagramCount(en, attempts, %d) = %q, want %q", n, got, want)
		}
	}
}

// The machine values that the diagram turns into words through a catalog
// key: the key's prefix and every value it may be followed by.
var dgOutcomes = []sim.Outcome{sim.OutcomeNotReached, sim.OutcomePending, sim.OutcomeCharged, sim.OutcomeDuplicate,
	sim.OutcomeReplayed, sim.OutcomeInFlight, sim.OutcomeConflict, sim.OutcomeMismatch, sim.OutcomeRejected, sim.OutcomeFailed,
	sim.OutcomeCreated, sim.OutcomeUpdated, sim.OutcomeDeleted, sim.OutcomeAbsent, sim.OutcomeDropped}

func dgDynamicKeys() map[string][]string {
	var fates, outcomes, strategies []string
	for _, f := range sim.Fates {
		fates = append(fates, string(f))
	}
	for _, o := range dgOutcomes {
		outcomes = append(outcomes, string(o))
	}
	for _, s := range sim.KeyStrategies {
		strategies = append(strategies, string(s))
	}
	lanes := []string{"client", "network", "server", "database", "broker", "consumer", "mail"}
	for _, l := range lanes[:7] {
		lanes = append(lanes, l+".full")
	}
	return map[string][]string{
		"diagram.fate.":     fates,
		"diagram.box.":      outcomes,
		"diagram.did.":      outcomes,
		"diagram.strategy.": strategies,
		"diagram.lane.":     lanes,
		"diagram.caption.":  {"PUT", "DELETE", "empty"},
	}
}

// TestDiagramCatalog checks the diagram's catalog whole: every key the
// diagram's code names, literally or as a prefix and a machine value, is
// there with words in both languages and the same fmt verbs in each; no
// other catalog shadows it; and no key is left over.
func TestDiagramCatalog(t *testing.T) {
	t.Parallel()
	catalog := views.DiagramMessages()
	if len(catalog) == 0 {
		t.Fatal("empty catalog")
	}
	verb := regexp.MustCompile(`%(\[\d+\])?[-+# 0]*\d*(\.\d+)?[a-zA-Z%]`)
	verbs := func(s string) []string {
		var out []string
		for _, v := range verb.FindAllString(s, -1) {
			out = append(out, v[len(v)-1:])
		}
		slices.Sort(out)
		return out
	}
	for _, key := range views.DiagramKeys() {
		m := catalog[key]
		en, ru := m[0], m[1]
		if !strings.HasPrefix(key, "diagram.") {
			t.Errorf("%s: not in the diagram. namespace", key)
		}
		if strings.TrimSpace(en) == "" || strings.TrimSpace(ru) == "" {
			t.Errorf("%s: empty words: en %q, ru %q", key, en, ru)
		}
		enForms, ruForms := strings.Split(en, "|"), strings.Split(ru, "|")
		if len(enForms) > 1 && (len(enForms) != 2 || len(ruForms) != 3) {
			t.Errorf("%s: counted word with %d English and %d Russian forms, want 2 and 3", key, len(enForms), len(ruForms))
		}
		for _, f := range ruForms {
			if !cmp.Equal(verbs(enForms[0]), verbs(f)) {
				t.Errorf("%s: fmt verbs differ: en %q %v, ru %q %v", key, enForms[0], verbs(enForms[0]), f, verbs(f))
			}
		}
		if got := views.Russian.T(key); got != ru {
			t.Errorf("%s: another catalog shadows it: T gives %q, the diagram's is %q", key, got, ru)
		}
		if strings.Count(en, "\n") > 2 || strings.Count(ru, "\n") > 2 {
			t.Errorf("%s: more than three lines", key)
		}
	}

	// The keys the code names.
	used := map[string]bool{}
	dynamic := dgDynamicKeys()
	literal := regexp.MustCompile(`"(diagram\.[a-z0-9.-]*)"`)
	for _, file := range []string{"../views/diagram.templ", "../views/diagram_layout.go", "../views/diagram_queue.go", "../views/messages_diagram.go"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if filepath.Base(file) == "messages_diagram.go" {
			// Only what follows the catalog: its own keys do not count.
			_, src, _ = strings.Cut(src, "\n}\n")
		}
		for _, m := range literal.FindAllStringSubmatch(src, -1) {
			key := m[1]
			if strings.HasSuffix(key, ".") {
				values, ok := dynamic[key]
				if !ok {
					t.Errorf("%s names the prefix %q: tell dgDynamicKeys what follows it", file, key)
				}
				for _, v := range values {
					used[key+v] = true
				}
				continue
			}
			used[key] = true
		}
	}
	for key := range used {
		if _, ok := catalog[key]; !ok {
			t.Errorf("key %q is used but not in the catalog", key)
		}
	}
	for key := range catalog {
		if !used[key] {
			t.Errorf("key %q is in the catalog but not used", key)
		}
	}
}

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

// TestDiagramRussian renders every kind of attempt, every key strategy and
// a network fate the diagram has no words for, in Russian: no key is
// missing and no English is left.
func TestDiagramRussian(t *testing.T) {
	t.Parallel()
	for _, s := range sim.KeyStrategies {
		op := dgStory()
		op.KeyStrategy = s
		doc, _ := dgRenderLang(t, views.Russian, op)
		dgNoEnglish(t, doc, op)
		if n := doc.Find("[data-testid=attempt]").Length(); n != len(op.Attempts) {
			t.Errorf("attempt elements: got %d, want %d", n, len(op.Attempts))
		}
		// Every fate and outcome appears as words, the machine values only
		// in the data attributes.
		doc.Find("[data-testid=attempt]").Each(func(_ int, a *goquery.Selection) {
			title := dgText(a.Find(".sd-attempt-title"))
			if fate := a.AttrOr("data-fate", ""); strings.Contains(title, fate) {
				t.Errorf("attempt title %q holds the machine value %q", title, fate)
			}
		})
	}
	// The fate words, each in its attempt's title.
	want := map[sim.Fate]string{
		sim.FateOK: "без сбоев", sim.FateRequestLost: "запрос потерялся", sim.FateResponseLost: "ответ потерялся",
		sim.FateSlow: "медленная сеть", sim.FateDuplicate: "двойная доставка",
	}
	doc, _ := dgRenderLang(t, views.Russian, dgStory())
	for _, a := range dgStory().Attempts {
		sel := doc.Find(fmt.Sprintf("[data-testid=attempt][data-n='%d'] .sd-attempt-title", a.N))
		if got, w := dgText(sel), fmt.Sprintf("Попытка %d · %s", a.N, want[a.Fate]); got != w {
			t.Errorf("attempt %d title: got %q, want %q", a.N, got, w)
		}
	}
	if got, w := dgTexts(doc.Find(".sd-lane")), []string{"клиент", "сеть", "сервер", "БД"}; !cmp.Equal(got, w) {
		t.Errorf("lane names: got %q, want %q", got, w)
	}
	if got := doc.Find(".sd-lanes title").Text(); got != "база данных" {
		t.Errorf("the database lane's tooltip: got %q, want «база данных»", got)
	}
	if got, w := dgText(doc.Find(".diagram-legend")), "Сплошная стрелка — запрос · пунктирная — ответ · ✕ — потеряно сетью · COMMIT — платёж записан"; got != w {
		t.Errorf("legend: got %q, want %q", got, w)
	}
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

// TestDiagramSamples writes the diagram of a few operations, in English and
// in Russian, as HTML pages styled by the lab's stylesheets, into the
// folder $IDEMLAB_DIAGRAM_SAMPLES, to be looked at or screenshot; each page
// also measures its labels and lists, in #spill, those that leave the
// drawing or their box, or overlap another label or a mark. Without the variable it skips.
func TestDiagramSamples(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("IDEMLAB_DIAGRAM_SAMPLES")
	if dir == "" {
		t.Skip("IDEMLAB_DIAGRAM_SAMPLES is not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	static, err := filepath.Abs("../static")
	if err != nil {
		t.Fatal(err)
	}
	story := dgStory()
	part := func(from, to int) *sim.Operation {
		op := *story
		op.Attempts = story.Attempts[from:to]
		return &op
	}
	many := &sim.Operation{ID: "op-8", OrderID: "order-43", Amount: 250000, KeyStrategy: sim.KeyUUIDPerRequest}
	for n := 1; n <= 21; n++ {
		many.Attempts = append(many.Attempts, sim.Attempt{N: n, Key: dgPtr(fmt.Sprintf("%08x-7b4d", n)), Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged})
	}
	samples := []struct {
		name string
		op   *sim.Operation
	}{
		{"a-lost-dup-slow", part(0, 4)},
		{"b-late-lost-409-422", part(4, 8)},
		{"c-400-500-replay-twice", part(8, 12)},
		{"d-21-attempts", many},
		{"e-empty", nil},
	}
	for _, s := range samples {
		for _, lang := range dgLangs {
			var b strings.Builder
			if err := views.SequenceDiagram(diagramOf(s.op)).Render(views.WithLang(context.Background(), lang), &b); err != nil {
				t.Fatal(err)
			}
			page := fmt.Sprintf(dgSamplePage, lang, "file://"+static, lang.T("diagram.section"), b.String())
			file := filepath.Join(dir, s.name+"-"+string(lang)+".html")
			if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", file)
		}
	}
}

const dgSamplePage = `<!doctype html>
<html lang="%[1]s"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="%[2]s/lab.css"><link rel="stylesheet" href="%[2]s/diagram.css"></head>
<body><main><div class="lab">
<section class="panel act"><h2>…</h2></section>
<div class="results"><section class="panel"><h2>%[3]s</h2><div id="diagram-region">%[4]s</div></section></div>
</div></main>
<pre id="spill" hidden></pre>
<script>
const svg = document.querySelector(".diagram-svg"), W = svg.viewBox.baseVal.width, out = [];
const texts = [...svg.querySelectorAll("text")].map(t => ({t, b: t.getBBox()}));
for (const {t, b} of texts) {
	if (b.x < 0 || b.x + b.width > W) out.push("outside the drawing: " + t.textContent + " " + b.x.toFixed(1) + ".." + (b.x + b.width).toFixed(1));
	const r = t.parentNode.querySelector("rect");
	if (r && /sd-(server|commit)-label|sd-lane/.test(t.getAttribute("class"))) {
		const rb = r.getBBox();
		if (b.x < rb.x + 4 || b.x + b.width > rb.x + rb.width - 4 || b.y < rb.y || b.y + b.height > rb.y + rb.height)
			out.push("out of its box: " + t.textContent + " " + b.x.toFixed(1) + ".." + (b.x + b.width).toFixed(1) + " in " + rb.x.toFixed(1) + ".." + (rb.x + rb.width).toFixed(1));
	}
}
for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
	const a = texts[i].b, c = texts[j].b;
	if (a.x < c.x + c.width - 1 && c.x < a.x + a.width - 1 && a.y < c.y + c.height - 2 && c.y < a.y + a.height - 2)
		out.push("overlap: " + texts[i].t.textContent + " / " + texts[j].t.textContent);
}
const marks = [...svg.querySelectorAll(".sd-cross, .sd-clock, .sd-node, .sd-box, .sd-lane-box")];
for (const {t, b} of texts) for (const m of marks) {
	if (m.parentNode === t.parentNode && m.tagName === "rect") continue; // its own box
	const c = m.getBBox();
	if (b.x < c.x + c.width && c.x < b.x + b.width && b.y < c.y + c.height && c.y < b.y + b.height)
		out.push("text on a mark: " + t.textContent + " / " + m.getAttribute("class"));
}
if (document.documentElement.scrollWidth > innerWidth) out.push("page scrolls sideways: " + document.documentElement.scrollWidth);
document.getElementById("spill").textContent = out.length ? out.join("\n") : "ok";
</script></body></html>
`
