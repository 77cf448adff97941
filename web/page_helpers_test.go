package web_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// page is a browser without JavaScript: a cookie jar on the lab's page.
type page struct {
	t      *testing.T
	s      *testServer
	client *http.Client
	path   string // the lab page, /labs/{id}
}

func openPage(t *testing.T, s *testServer, settings string) (*page, *goquery.Document) {
	t.Helper()
	p := &page{t: t, s: s, path: "/labs/" + strings.TrimPrefix(s.newLab(settings), "/api/v1/labs/"), client: pageClient()}
	return p, p.get()
}

// pageClient is a browser without JavaScript: cookies of its own, and
// redirects seen, not followed.
func pageClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (p *page) get() *goquery.Document {
	p.t.Helper()
	resp, err := p.client.Get(p.s.URL + p.path)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		p.t.Fatalf("GET %s: %d", p.path, resp.StatusCode)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return doc
}

// post sends a form as a browser would from the lab's own page (its
// origin, in Origin and Sec-Fetch-Site); htmx adds its headers.
func (p *page) post(action string, form url.Values, htmx bool) (*http.Response, string) {
	p.t.Helper()
	req, _ := http.NewRequest("POST", p.s.URL+action, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", p.s.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if htmx {
		req.Header.Set("HX-Request", "true")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func text(doc *goquery.Document, testid string) string {
	return strings.TrimSpace(doc.Find(`[data-testid="` + testid + `"]`).First().Text())
}
