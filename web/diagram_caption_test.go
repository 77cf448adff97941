package web

import (
	"fmt"
	"strings"
	"testing"

	"idemlab/sim"
	"idemlab/views"
)

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
			if got := dgTexts(fig.Find(".diagram-svg .sd-lane")); len(got) != 4 {
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
