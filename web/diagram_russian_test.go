package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/views"
)

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
	if got, w := dgTexts(doc.Find(".diagram-svg .sd-lane")), []string{"клиент", "сеть", "сервер", "БД"}; !cmp.Equal(got, w) {
		t.Errorf("lane names: got %q, want %q", got, w)
	}
	if got := doc.Find(".sd-lanes title").Text(); got != "база данных" {
		t.Errorf("the database lane's tooltip: got %q, want «база данных»", got)
	}
	if got, w := dgText(doc.Find(".diagram-legend")), "Сплошная стрелка — запрос · пунктирная — ответ · ✕ — потеряно сетью · COMMIT — платёж записан"; got != w {
		t.Errorf("legend: got %q, want %q", got, w)
	}
}
