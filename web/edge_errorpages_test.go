package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"idemlab/web"
)

// browserAccept is the Accept header of a browser's navigation.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"

// A browser that meets an error gets a page in its reader's language, with
// the status, the Retry-After and the problem's type as the JSON would have
// had them, a way back to the lab and a link to the problem's explanation.
func TestBrowsersGetErrorPages(t *testing.T) {
	t.Parallel()
	s := startServerWith(t, web.Options{LabRate: web.Rate{Every: time.Hour, Burst: 1}})
	s.must(http.StatusCreated, "POST", "/api/v1/labs", "")
	for _, tc := range []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		slug                     string
		en, ru                   string // words of the lead
		retryAfter               bool
	}{
		{"missing lab", "GET", "/labs/AAAAAAAAAAAAAAAAAAAAAA", "", nil, 404, "not-found", "There is no lab at this address", "По этому адресу нет лаборатории", false},
		{"missing lab, API address", "GET", "/api/v1/labs/AAAAAAAAAAAAAAAAAAAAAA/settings", "", nil, 404, "not-found", "There is no lab at this address", "По этому адресу нет лаборатории", false},
		{"bad scenario link", "GET", "/s/garbage", "", nil, 400, "validation-error", "This scenario link is damaged", "Ссылка на сценарий повреждена", false},
		{"unknown address", "GET", "/no/such/page", "", nil, 404, "not-found", "There is nothing at this address", "По этому адресу ничего нет", false},
		{"wrong method", "GET", "/labs", "", nil, 405, "method-not-allowed", "not for this kind of request", "не для такого запроса", false},
		{"wrong method on the page", "PUT", "/", "", nil, 405, "method-not-allowed", "not for this kind of request", "не для такого запроса", false},
		{"too many labs", "POST", "/labs", "", formHeaders(), 429, "rate-limited", "asked for this too often", "запрашивали слишком часто", true},
		{"another site's form", "POST", "/labs", "", formHeaders("Sec-Fetch-Site", "cross-site"), 403, "cross-site-request", "A page of another site", "Страница другого сайта", false},
	} {
		for _, lang := range []string{"en", "ru"} {
			t.Run(tc.name+"/"+lang, func(t *testing.T) {
				ts := *s
				ts.tb = t
				h := append([]string{"Accept", browserAccept, "Accept-Language", lang}, tc.headers...)
				r := ts.do(tc.method, tc.path, tc.body, h...)
				if r.Status != tc.status {
					t.Errorf("status %d, want %d", r.Status, tc.status)
				}
				if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
					t.Fatalf("Content-Type %q, want a page\n%.300s", ct, r.Body)
				}
				if got := r.Header.Get("Retry-After"); (got != "") != tc.retryAfter {
					t.Errorf("Retry-After %q", got)
				}
				if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || r.Header.Get("Referrer-Policy") == "" {
					t.Errorf("Content-Security-Policy %q, Referrer-Policy %q: want a page's, whatever its address", csp, r.Header.Get("Referrer-Policy"))
				}
				doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(r.Body)))
				if err != nil {
					t.Fatal(err)
				}
				if got := doc.Find("html").AttrOr("lang", ""); got != lang {
					t.Errorf("lang %q, want %s", got, lang)
				}
				page := doc.Find(`[data-testid="error-page"]`)
				if got := page.AttrOr("data-status", ""); got != strconv.Itoa(tc.status) {
					t.Errorf("data-status %q", got)
				}
				lead := map[string]string{"en": tc.en, "ru": tc.ru}[lang]
				if got := page.Find(".lead").Text(); !strings.Contains(got, lead) {
					t.Errorf("lead %q, want it to say %q", got, lead)
				}
				if got := doc.Find(`[data-testid="error-home"]`).AttrOr("href", ""); got != "/" {
					t.Errorf("the way back to the lab is %q", got)
				}
				if got := doc.Find(`[data-testid="error-explain"]`).AttrOr("href", ""); got != "/problems/"+tc.slug {
					t.Errorf("the explanation is at %q, want /problems/%s", got, tc.slug)
				}
				explained := getPage(t, http.DefaultClient, s.URL+"/problems/"+tc.slug+"?lang="+lang, "")
				if got, want := page.Find("h1").Text(), explained.Find("h1").Text(); got != want {
					t.Errorf("title %q, the explanation's %q", got, want)
				}
				retry := doc.Find(`[data-testid="error-retry"]`)
				if tc.retryAfter && (retry.AttrOr("data-retry-after", "") != r.Header.Get("Retry-After") || !strings.Contains(retry.Text(), map[string]string{"en": "60 minutes", "ru": "60 минут"}[lang])) {
					t.Errorf("the page says to retry %q (%s), Retry-After %s", retry.Text(), retry.AttrOr("data-retry-after", ""), r.Header.Get("Retry-After"))
				}
				if lang == "ru" {
					for _, w := range englishOn(doc, "") {
						t.Errorf("the Russian page shows %q", w)
					}
				}
			})
		}
	}
}

// Programs keep getting problem+json: curl's */*, an Accept naming JSON
// first or alone, no Accept at all; htmx's requests get the page's notice
// (htmx swaps error answers into the page); a HEAD gets the page's headers
// and no body.
func TestProgramsGetProblemJSON(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	const missing = "/labs/AAAAAAAAAAAAAAAAAAAAAA"
	for _, h := range [][]string{
		nil,
		{"Accept", "*/*"},
		{"Accept", "application/json"},
		{"Accept", "application/problem+json, text/html;q=0.5"},
		{"Accept", "text/html;q=0.9, application/json"},
		{"Accept", "text/html, application/json"}, // a tie: JSON
		{"Accept", "text/*"},
	} {
		r := s.do("GET", missing, "", h...)
		checkProblem(t, r, http.StatusNotFound, "/problems/not-found", "")
	}
	if r := s.do("GET", missing, "", "Accept", browserAccept, "HX-Request", "true"); r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), `id="notice"`) {
		t.Errorf("htmx: %d %s, want 404 with the page's notice", r.Status, r.Body)
	}
	r := s.do("HEAD", missing, "", "Accept", browserAccept)
	if r.Status != http.StatusNotFound || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || len(r.Body) != 0 {
		t.Errorf("HEAD: %d %q, %d bytes", r.Status, r.Header.Get("Content-Type"), len(r.Body))
	}
	if v := r.Header.Values("Vary"); !strings.Contains(strings.Join(v, ","), "Accept") {
		t.Errorf("Vary %q does not name Accept", v)
	}
}

// The error pages repeat no more of the request than the JSON does.
func TestErrorPagesEchoLittle(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, path := range []string{"/s/" + strings.Repeat("a", 65_000), "/labs/" + strings.Repeat("a", 65_000), "/" + strings.Repeat("a", 65_000)} {
		for _, lang := range []string{"en", "ru"} {
			r := s.do("GET", path, "", "Accept", browserAccept, "Accept-Language", lang)
			if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
				t.Errorf("%.20s…: Content-Type %q", path, r.Header.Get("Content-Type"))
			}
			if strings.Contains(string(r.Body), strings.Repeat("a", 201)) || len(r.Body) > 8<<10 {
				t.Errorf("%.20s… (%s): the page of %d bytes repeats the path", path, lang, len(r.Body))
			}
		}
	}
}
