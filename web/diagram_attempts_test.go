package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"idemlab/sim"
	"idemlab/sim/client"
	"idemlab/views"
)

// dgWords is what one language says of an attempt.
type dgWords struct {
	lost     []string // labels of the network's ✕ marks
	sentence string   // a phrase of the text equivalent
}

// dgAttemptKey is the key of the attempts of dgAttemptTests.
var dgAttemptKey = dgPtr(dgKey)

// dgAttemptTests are the attempts TestDiagramAttempts draws, each alone.
var dgAttemptTests = []struct {
	name     string
	attempt  sim.Attempt
	commits  int      // COMMIT marks on the database lane
	statuses []string // status labels on answer arrows
	marks    []string // other marks that must be drawn
	en, ru   dgWords
}{
	{
		name:     "ok charged",
		attempt:  sim.Attempt{N: 1, Key: dgAttemptKey, Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
		commits:  1,
		statuses: []string{"201"},
		en:       dgWords{sentence: "Attempt 1, key 3f2a9c1e…: reached the server, which charged the order (COMMIT); the client got 201."},
		ru:       dgWords{sentence: "Попытка 1, ключ 3f2a9c1e…: запрос дошёл до сервера, и тот списал деньги (COMMIT); клиент получил 201."},
	},
	{
		name:    "request lost",
		attempt: sim.Attempt{N: 1, Key: dgAttemptKey, Fate: sim.FateRequestLost, Error: dgPtr(client.ErrRequestLost.Error()), Outcome: sim.OutcomeNotReached, Deliveries: []sim.Delivery{}},
		marks:   []string{"no-answer"},
		en:      dgWords{[]string{"request lost"}, "the network lost the request, so the server never saw it"},
		ru:      dgWords{[]string{"запрос потерялся"}, "сеть потеряла запрос, и сервер его не увидел; клиент не получил ответа."},
	},
	{
		name:     "response lost after the commit",
		attempt:  sim.Attempt{N: 1, Key: dgAttemptKey, Fate: sim.FateResponseLost, Error: dgPtr(client.ErrResponseLost.Error()), Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
		commits:  1,
		statuses: []string{"201"},
		marks:    []string{"no-answer"},
		en:       dgWords{[]string{"answer lost"}, "charged the order (COMMIT); the network lost the answer, so the client got no answer."},
		ru:       dgWords{[]string{"ответ потерялся"}, "списал деньги (COMMIT); сеть потеряла ответ, и клиент ничего не получил."},
	},
	{
		name:    "slow, the server still working",
		attempt: sim.Attempt{N: 2, Key: dgAttemptKey, Fate: sim.FateSlow, Error: dgPtr(client.ErrTooSlow.Error()), Outcome: sim.OutcomePending, Deliveries: []sim.Delivery{}},
		marks:   []string{"timeout", "server"},
		en:      dgWords{sentence: "which is still working; the client timed out before the answer came."},
		ru:      dgWords{sentence: "и тот ещё работает; клиент не дождался ответа: истёк таймаут."},
	},
	{
		name:     "slow, the answer too late",
		attempt:  sim.Attempt{N: 2, Key: dgAttemptKey, Fate: sim.FateSlow, Error: dgPtr(client.ErrTooSlow.Error()), Outcome: sim.OutcomeCharged, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeCharged)}},
		commits:  1,
		statuses: []string{"201"},
		marks:    []string{"timeout", "late"},
		en:       dgWords{sentence: "the client timed out before the answer came."},
		ru:       dgWords{sentence: "клиент не дождался ответа: истёк таймаут."},
	},
	{
		name: "duplicate delivery, charged once",
		attempt: sim.Attempt{N: 3, Key: dgAttemptKey, Fate: sim.FateDuplicate, Status: 201, Outcome: sim.OutcomeCharged,
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
		attempt:  sim.Attempt{N: 2, Key: dgAttemptKey, Fate: sim.FateOK, Status: 200, Outcome: sim.OutcomeDuplicate, Deliveries: []sim.Delivery{dgDelivery(1, 200, sim.OutcomeDuplicate)}},
		statuses: []string{"200"},
		marks:    []string{"server"},
		en:       dgWords{sentence: "Attempt 2, key 3f2a9c1e…: reached the server, which found the key already used (duplicate); the client got 200."},
		ru:       dgWords{sentence: "Попытка 2, ключ 3f2a9c1e…: запрос дошёл до сервера, и тот увидел, что ключ уже использован (дубликат); клиент получил 200."},
	},
	{
		name:     "replayed",
		attempt:  sim.Attempt{N: 2, Key: dgAttemptKey, Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeReplayed, Deliveries: []sim.Delivery{dgDelivery(1, 201, sim.OutcomeReplayed)}},
		statuses: []string{"201"},
		marks:    []string{"server"},
		en:       dgWords{sentence: "replayed the stored answer"},
		ru:       dgWords{sentence: "повторил сохранённый ответ первого запроса"},
	},
	{
		name:     "in flight",
		attempt:  sim.Attempt{N: 2, Key: dgAttemptKey, Fate: sim.FateOK, Status: 409, Outcome: sim.OutcomeInFlight, Deliveries: []sim.Delivery{dgDelivery(1, 409, sim.OutcomeInFlight)}},
		statuses: []string{"409"},
		marks:    []string{"server"},
		en:       dgWords{sentence: "still in flight (409); the client got 409."},
		ru:       dgWords{sentence: "ещё выполняется (409); клиент получил 409."},
	},
	{
		name:     "mismatch",
		attempt:  sim.Attempt{N: 2, Key: dgAttemptKey, Fate: sim.FateOK, Status: 422, Outcome: sim.OutcomeMismatch, Deliveries: []sim.Delivery{dgDelivery(1, 422, sim.OutcomeMismatch)}},
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
		attempt:  sim.Attempt{N: 1, Key: dgAttemptKey, Fate: sim.FateOK, Status: 500, Outcome: sim.OutcomeFailed, Deliveries: []sim.Delivery{dgDelivery(1, 500, sim.OutcomeFailed)}},
		statuses: []string{"500"},
		marks:    []string{"server"},
		en:       dgWords{sentence: "which failed; the client got 500."},
		ru:       dgWords{sentence: "и тот ответил ошибкой; клиент получил 500."},
	},
}

func TestDiagramAttempts(t *testing.T) {
	t.Parallel()
	for _, tt := range dgAttemptTests {
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
