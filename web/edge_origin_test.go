package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// A page on another port of the same host, or of another site, cannot make
// a visitor's browser post the lab's forms: the posts are refused with 403
// and record nothing.
func TestCrossOriginFormPostsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	api := apiOf(p)
	s.must(http.StatusCreated, "POST", api+"/charges", `{"order_id":"order-1","amount":100}`)
	charge := url.Values{"order_id": {"order-42"}, "amount": {"1500"}}.Encode()
	same := otherPort(t, s.URL)
	for _, tc := range []struct {
		name    string
		headers []string
	}{
		{"same-site page (another port)", []string{"Sec-Fetch-Site", "same-site", "Origin", same}},
		{"cross-site page", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}},
		{"cross-site, htmx-like", []string{"Sec-Fetch-Site", "cross-site", "HX-Request", "true"}},
		{"old browser: Origin of another port only", []string{"Origin", same}},
	} {
		for _, path := range []string{p.path + "/charge", p.path + "/reset", p.path + "/settings", p.path + "/lesson"} {
			r := s.do("POST", path, charge, formHeaders(tc.headers...)...)
			if slices.Contains(tc.headers, "HX-Request") { // htmx swaps error answers: a notice, not JSON
				if r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), `role="alert"`) && !strings.Contains(string(r.Body), `id="notice"`) {
					t.Errorf("%s %s: %d %s, want 403 with a notice", tc.name, path, r.Status, r.Body)
				}
				continue
			}
			checkProblem(t, r, http.StatusForbidden, "/problems/cross-site-request", "")
		}
	}
	if l := s.ledger(api); l.Count != 1 {
		t.Errorf("%d payments after refused posts, want the 1 made before", l.Count)
	}
	if got := s.must(http.StatusOK, "GET", api+"/settings", "").JSON(t)["protection"]; got != "none" {
		t.Errorf("protection %v after a refused settings post", got)
	}
	for _, path := range []string{"/labs", "/compare"} {
		r := s.do("POST", path, "", "Sec-Fetch-Site", "same-site", "Origin", same)
		checkProblem(t, r, http.StatusForbidden, "/problems/cross-site-request", "")
	}
}

// The API's writes are guarded the same way: an old browser that sends a
// foreign Origin and no Sec-Fetch-Site is refused; the lab's own pages and
// programs without either header (curl) are served.
func TestCrossOriginAPIWrites(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	api := s.newLab("")
	const body = `{"order_id":"order-42","amount":1500}`
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		body    string
		headers []string
	}{
		{"charge, foreign Origin", "POST", api + "/charges", body, []string{"Origin", "https://evil.example"}},
		{"charge, Origin of another port", "POST", api + "/charges", body, []string{"Origin", otherPort(t, s.URL)}},
		{"charge, cross-site", "POST", api + "/charges", body, []string{"Sec-Fetch-Site", "cross-site"}},
		{"settings, foreign Origin", "PATCH", api + "/settings", `{"protection":"unique"}`, []string{"Origin", "https://evil.example"}},
		{"reset, same-site", "POST", api + "/reset", "", []string{"Sec-Fetch-Site", "same-site"}},
		{"new lab, foreign Origin", "POST", "/api/v1/labs", "", []string{"Origin", "https://evil.example"}},
		{"an unknown route, cross-site", "DELETE", api, "", []string{"Sec-Fetch-Site", "cross-site"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := *s
			ts.tb = t
			r := ts.do(tc.method, tc.path, tc.body, tc.headers...)
			checkProblem(t, r, http.StatusForbidden, "/problems/cross-site-request", "")
		})
	}
	if l := s.ledger(api); l.Count != 0 {
		t.Errorf("%d payments after refused charges", l.Count)
	}
	if got := s.must(http.StatusOK, "GET", api+"/settings", "").JSON(t)["protection"]; got != "none" {
		t.Errorf("protection %v after a refused PATCH", got)
	}

	for i, h := range [][]string{
		nil, // curl
		{"Origin", s.URL},
		{"Origin", s.URL, "Sec-Fetch-Site", "same-origin"},
		{"Sec-Fetch-Site", "same-origin"},
		{"Sec-Fetch-Site", "none"}, // typed by the person
	} {
		s.must(http.StatusCreated, "POST", api+"/charges", `{"order_id":"order-`+itoa(i)+`","amount":100}`, h...)
	}
	if l := s.ledger(api); l.Count != 5 {
		t.Errorf("%d payments after 5 same-origin or curl charges", l.Count)
	}
	// Reading is never refused: a link from another site opens the page.
	s.must(http.StatusOK, "GET", "/", "", "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example")
	s.must(http.StatusOK, "GET", api+"/payments", "", "Sec-Fetch-Site", "cross-site")
}

// The page carries no form token any more: nothing in its forms, its htmx
// headers or its cookies.
func TestPageCarriesNoToken(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	r := s.must(http.StatusOK, "GET", "/", "")
	for _, word := range []string{"_csrf", "CSRF"} {
		if strings.Contains(string(r.Body), word) {
			t.Errorf("the page still mentions %s", word)
		}
	}
	if c := r.Header.Values("Set-Cookie"); len(c) != 0 {
		t.Errorf("the page sets cookies %q", c)
	}
}
