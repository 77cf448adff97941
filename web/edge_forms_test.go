package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// A form post that gives a field twice is refused naming the field, and
// changes nothing: Go's FormValue would take the first value, other
// readers the last. The page's own forms, one value each, are served.
func TestFormFieldsSentOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	api := apiOf(p)
	for _, tc := range []struct {
		action, body, field string
	}{
		{p.path + "/charge", "order_id=order-42&amount=1500&amount=1", "amount"},
		{p.path + "/charge", "order_id=order-42&order_id=order-43&amount=1500", "order_id"},
		{p.path + "/charge?amount=1", "order_id=order-42&amount=1500", "amount"}, // the query and the body
		{p.path + "/settings", "protection=replay&protection=none", "protection"},
		{p.path + "/settings", "retry_auto=on&retry_auto=on", "retry_auto"},
		{p.path + "/lesson", "lesson=1&lesson=2", "lesson"},
		{p.path + "/race", "parallel=2&parallel=64", "parallel"},
		{p.path + "/retry", "with_key=true&with_key=false", "with_key"},
		{"/labs", "x=1&x=2", "x"},
	} {
		r := s.do("POST", tc.action, tc.body, formHeaders("Origin", s.URL)...)
		checkProblem(t, r, http.StatusBadRequest, "/problems/validation-error", tc.field)
	}
	if l := s.ledger(api); l.Count != 0 {
		t.Errorf("%d payments after refused forms", l.Count)
	}
	got := s.must(http.StatusOK, "GET", api+"/settings", "").JSON(t)
	if got["protection"] != "none" || got["retry"].(map[string]any)["mode"] != "manual" {
		t.Errorf("settings changed by refused forms: %v", got)
	}
	if got := s.must(http.StatusOK, "GET", api+"/lesson", "").JSON(t)["lesson"]; got != float64(0) {
		t.Errorf("lesson %v chosen by a refused form", got)
	}
	// A browser is told so on a page, with the field named.
	r := s.do("POST", p.path+"/charge", "order_id=order-42&amount=1500&amount=1", formHeaders("Accept", browserAccept, "Accept-Language", "ru")...)
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(string(r.Body)))
	if r.Status != http.StatusBadRequest || doc.Find(`[data-testid="error-page"] code`).Last().Text() != "amount" {
		t.Errorf("the browser's page: %d, fields %q", r.Status, doc.Find(`[data-testid="error-page"] p`).Text())
	}
	// One value a field, as the page sends: served.
	if resp, body := p.post(p.path+"/charge", url.Values{"order_id": {"order-42"}, "amount": {"1500"}}, false); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a good charge form: %d %s", resp.StatusCode, body)
	}
	if resp, body := p.post(p.path+"/charge?lang=ru", url.Values{"order_id": {"order-43"}, "amount": {"1500"}}, true); resp.StatusCode != http.StatusOK {
		t.Errorf("a good htmx charge with ?lang: %d %.200s", resp.StatusCode, body)
	}
}

// The page's settings carry the server's capacity and the client's retry
// budget: each field the page shows sets its setting, the Retry-After
// switch is off when the form shows it unchecked, and a ratio that is no
// number is refused naming its field.
func TestSettingsFormSetsCapacityAndBudget(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, doc := openPage(t, s, "")
	for _, name := range []string{"capacity_rps", "budget", "max_tokens", "token_ratio", "budget_percent", "respect_retry_after", "respect_retry_after_shown"} {
		if doc.Find(`[name="`+name+`"][form="settings-form"]`).Length() != 1 {
			t.Errorf("the page has no settings field %s", name)
		}
	}
	form := url.Values{"capacity_rps": {"250"}, "budget": {"ratio"}, "max_tokens": {"40"}, "token_ratio": {"0.25"},
		"budget_percent": {"10"}, "respect_retry_after_shown": {"1"}}
	if resp, body := p.post(p.path+"/settings", form, true); resp.StatusCode != http.StatusOK {
		t.Fatalf("the settings form: %d %.300s", resp.StatusCode, body)
	}
	got := s.must(http.StatusOK, "GET", apiOf(p)+"/settings", "").JSON(t)
	retry := got["retry"].(map[string]any)
	if got["capacity_rps"] != float64(250) || retry["budget"] != "ratio" || retry["max_tokens"] != float64(40) ||
		retry["token_ratio"] != 0.25 || retry["budget_percent"] != float64(10) || retry["respect_retry_after"] != false {
		t.Errorf("settings after the form: %v", got)
	}
	if resp, body := p.post(p.path+"/settings", url.Values{"token_ratio": {"a-lot"}}, true); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "token_ratio") {
		t.Errorf("a ratio that is no number: %d %.300s; want 422 naming token_ratio", resp.StatusCode, body)
	}
	if r := s.must(http.StatusOK, "GET", apiOf(p)+"/settings", "").JSON(t)["retry"].(map[string]any)["token_ratio"]; r != 0.25 {
		t.Errorf("token_ratio %v after a refused form, want 0.25 as it was", r)
	}
}
