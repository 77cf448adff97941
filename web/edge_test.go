package web_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"idemlab/sim/labs"
	"idemlab/web"
)

// startServerWith starts the lab as startServer does, with the server's
// options (its limits) given.
func startServerWith(tb testing.TB, opts web.Options) *testServer {
	tb.Helper()
	return startServer(tb, withLimits(labs.Config{}, opts))
}

// from is the server as seen from another client address of the loopback
// network (127.0.0.0/8 is all loopback on Linux).
func (s *testServer) from(tb testing.TB, addr string) *testServer {
	tb.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}}
	transport := &http.Transport{DialContext: d.DialContext}
	tb.Cleanup(transport.CloseIdleConnections)
	o := *s
	o.tb = tb
	o.client = &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &o
}

// formHeaders make s.do send its body as a form, with more headers after.
func formHeaders(more ...string) []string {
	return append([]string{"Content-Type", "", "Content-Type", "application/x-www-form-urlencoded"}, more...)
}

// apiOf is the API prefix of a page's lab.
func apiOf(p *page) string { return "/api/v1/labs/" + strings.TrimPrefix(p.path, "/labs/") }

// otherPort is the origin of base on another port: the same host, another
// origin, "same-site" to a browser.
func otherPort(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	port := "8081"
	if u.Port() == port {
		port = "8082"
	}
	return u.Scheme + "://" + u.Hostname() + ":" + port
}

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

// The new problem types have their pages in both languages; the form
// token's is gone with the token.
func TestLimitProblemPages(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, tc := range []struct{ slug, en, ru string }{
		{"forbidden", "Forbidden", "Запрещено"},
		{"rate-limited", "Too many requests", "Слишком много запросов"},
		{"server-busy", "The server is busy", "Сервер занят"},
		{"cross-site-request", "Request from another site", "Запрос с другого сайта"},
	} {
		for lang, want := range map[string]string{"en": tc.en, "ru": tc.ru} {
			doc := getPage(t, http.DefaultClient, s.URL+"/problems/"+tc.slug+"?lang="+lang, "")
			if got := doc.Find("h1").Text(); got != want {
				t.Errorf("/problems/%s in %s: h1 %q, want %q", tc.slug, lang, got, want)
			}
		}
		if doc := getPage(t, http.DefaultClient, s.URL+"/problems", ""); doc.Find(`a[href="/problems/`+tc.slug+`"]`).Length() != 1 {
			t.Errorf("/problems does not list %s", tc.slug)
		}
	}
	s.must(http.StatusNotFound, "GET", "/problems/csrf-token-invalid", "")
}

// wantLimited checks a 429 of the named limit, whose Retry-After is the
// whole seconds to the next token: between lo and hi.
func wantLimited(t *testing.T, r response, limit string, lo, hi int) {
	t.Helper()
	checkProblem(t, r, http.StatusTooManyRequests, "/problems/rate-limited", "")
	if got := r.JSON(t)["limit"]; got != limit {
		t.Errorf("limit %v, want %s", got, limit)
	}
	n, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || n < lo || n > hi {
		t.Errorf("Retry-After %q, want %d to %d seconds", r.Header.Get("Retry-After"), lo, hi)
	}
}

// Creating labs, comparing and opening scenario links are limited per
// client address, each on its own, the page and the API alike; a forged
// X-Forwarded-For does not make another address; charges are not limited.
func TestRateLimitsPerAddress(t *testing.T) {
	t.Parallel()
	s := startServerWith(t, web.Options{
		LabRate:      web.Rate{Every: time.Hour, Burst: 2},
		CompareRate:  web.Rate{Every: time.Minute, Burst: 1},
		ScenarioRate: web.Rate{Every: 30 * time.Second, Burst: 2},
	}).from(t, "127.0.0.1")

	lab := s.newLab("")
	s.must(http.StatusSeeOther, "POST", "/labs", "", formHeaders()...) // the page's button: the same bucket
	for _, h := range [][]string{
		nil,
		{"X-Forwarded-For", "203.0.113.7"},
		{"X-Real-IP", "203.0.113.8"},
		{"X-Forwarded-For", "203.0.113.9, 127.0.0.1"},
	} {
		wantLimited(t, s.do("POST", "/api/v1/labs", "", h...), "lab-rate", 3590, 3600)
	}
	wantLimited(t, s.do("POST", "/labs", "", formHeaders()...), "lab-rate", 3590, 3600)

	s.must(http.StatusOK, "POST", "/api/v1/compare", "")
	wantLimited(t, s.do("POST", "/api/v1/compare", ""), "compare-rate", 50, 60)
	wantLimited(t, s.do("POST", "/compare", "", formHeaders()...), "compare-rate", 50, 60)

	s.operation(lab, `{"order_id":"order-1","amount":100}`)
	code := s.must(http.StatusOK, "GET", lab+"/scenario", "").JSON(t)["code"].(string)
	s.must(http.StatusSeeOther, "GET", "/s/"+code, "")
	s.must(http.StatusSeeOther, "HEAD", "/s/"+code, "") // HEAD rebuilds as GET does
	wantLimited(t, s.do("GET", "/s/"+code, ""), "scenario-rate", 25, 30)
	wantLimited(t, s.do("GET", "/s/garbage", ""), "scenario-rate", 25, 30)

	// The protected endpoint and the simulated client are never limited.
	for i := range 20 {
		s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-`+itoa(i)+`","amount":1}`)
	}
	for range 5 {
		s.operation(lab, `{"order_id":"order-x","amount":1,"fate":"response-lost"}`)
	}

	// Another address has buckets of its own.
	other := s.from(t, "127.0.0.2")
	other.must(http.StatusCreated, "POST", "/api/v1/labs", "")
	other.must(http.StatusOK, "POST", "/api/v1/compare", "")
	other.must(http.StatusSeeOther, "GET", "/s/"+code, "")
}

// The limits have defaults fit for a class behind one address: thirty
// new labs at once pass.
func TestRateLimitDefaults(t *testing.T) {
	t.Parallel()
	// The lab's clock stands still, so no token comes back while the
	// comparisons run, however long a busy machine makes them.
	s := startServer(t, withClock(newFakeClock(time.Now())))
	for range 30 {
		s.must(http.StatusCreated, "POST", "/api/v1/labs", "")
	}
	wantLimited(t, s.do("POST", "/api/v1/labs", ""), "lab-rate", 1, 2)
	for range 3 {
		s.must(http.StatusOK, "POST", "/api/v1/compare", "")
	}
	wantLimited(t, s.do("POST", "/api/v1/compare", ""), "compare-rate", 1, 10)
	off := startServerWith(t, web.Options{LabRate: web.Rate{Burst: -1}})
	for range 40 {
		off.must(http.StatusCreated, "POST", "/api/v1/labs", "")
	}
}

// echoed is every string of a problem body that may repeat the request.
func echoed(t *testing.T, r response) []string {
	t.Helper()
	p := r.JSON(t)
	out := []string{}
	for _, k := range []string{"detail", "instance"} {
		if v, ok := p[k].(string); ok {
			out = append(out, v)
		}
	}
	errs, _ := p["errors"].([]any)
	for _, e := range errs {
		m := e.(map[string]any)
		out = append(out, m["field"].(string), m["detail"].(string))
	}
	return out
}

// A problem never repeats more than 200 characters of the request: not a
// 65 KB scenario code or lab id in the path, nor a long name or value in
// the body.
func TestProblemsEchoLittle(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	long := strings.Repeat("a", 65_000)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"scenario code", "GET", "/s/" + long, "", 400},
		{"scenario code, not base64", "GET", "/s/" + strings.Repeat("*", 65_000), "", 400},
		{"lab page", "GET", "/labs/" + long, "", 404},
		{"lab settings", "GET", "/api/v1/labs/" + long + "/settings", "", 404},
		{"lab charge", "POST", "/api/v1/labs/" + long + "/charges", validCharge, 404},
		{"unknown route", "GET", "/" + long, "", 404},
		{"Russian letters", "GET", "/labs/" + strings.Repeat("я", 30_000), "", 404},
		{"long field name", "POST", lab + "/charges", `{"` + strings.Repeat("n", 60_000) + `":1}`, 400},
		{"long order id", "POST", lab + "/charges", `{"order_id":"` + strings.Repeat("o", 60_000) + `","amount":1}`, 400},
		{"long operation id", "GET", lab + "/operations/" + long, "", 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := *s
			ts.tb = t
			r := ts.do(tc.method, tc.path, tc.body)
			if r.Status != tc.status {
				t.Errorf("status %d, want %d", r.Status, tc.status)
			}
			got := echoed(t, r)
			if len(got) == 0 {
				t.Fatalf("nothing to check in %s", r.Body)
			}
			for _, v := range got {
				if n := len([]rune(v)); n > 200 {
					t.Errorf("%d characters echoed: %.80s…", n, v)
				}
			}
			if len(r.Body) > 2048 {
				t.Errorf("a problem of %d bytes", len(r.Body))
			}
		})
	}
}

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

// The page links its styles and scripts by addresses that carry their
// content's hash; there they are cached for a year; everywhere a
// conditional GET with their ETag is answered 304; they go gzipped to a
// client that takes it. The page stays strict: no inline script, a
// Content-Security-Policy that allows none.
func TestStaticFilesCached(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	page := s.must(http.StatusOK, "GET", "/", "")
	csp := page.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(string(page.Body)))
	if n := doc.Find("script:not([src]), [style]").Length(); n != 0 {
		t.Errorf("%d inline scripts or styles on the page", n)
	}
	var links []string
	doc.Find(`link[rel=stylesheet], script[src]`).Each(func(_ int, e *goquery.Selection) {
		links = append(links, e.AttrOr("href", e.AttrOr("src", "")))
	})
	if len(links) != 5 {
		t.Fatalf("the page links %q, want 2 styles and 3 scripts", links)
	}
	seen := map[string]bool{}
	for _, link := range links {
		file, v, ok := strings.Cut(link, "?v=")
		if !ok || !strings.HasPrefix(file, "/static/") || len(v) < 8 {
			t.Errorf("%s: not a hashed /static/ address", link)
			continue
		}
		identity := s.must(http.StatusOK, "GET", link, "", "Accept-Encoding", "identity")
		sum := sha256.Sum256(identity.Body)
		if !strings.HasPrefix(hex.EncodeToString(sum[:]), v) {
			t.Errorf("%s: ?v= is not the start of the file's SHA-256 %x", link, sum)
		}
		if seen[v] {
			t.Errorf("%s: two files with one version", link)
		}
		seen[v] = true
		if got := identity.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", link, got)
		}
		etag := identity.Header.Get("ETag")
		if etag == "" || identity.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: ETag %q, Content-Encoding %q", link, etag, identity.Header.Get("Content-Encoding"))
		}
		if ct := identity.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/css") && !strings.HasPrefix(ct, "text/javascript") {
			t.Errorf("%s: Content-Type %q", link, ct)
		}
		again := s.do("GET", link, "", "Accept-Encoding", "identity", "If-None-Match", etag)
		if again.Status != http.StatusNotModified || len(again.Body) != 0 {
			t.Errorf("%s with If-None-Match: %d, %d bytes; want 304", link, again.Status, len(again.Body))
		}
		// Without the hash (an old page, a hand-typed address): revalidated.
		plain := s.must(http.StatusOK, "GET", file, "", "Accept-Encoding", "identity")
		if got := plain.Header.Get("Cache-Control"); got != "no-cache" || plain.Header.Get("ETag") != etag || !bytes.Equal(plain.Body, identity.Body) {
			t.Errorf("%s: Cache-Control %q, ETag %q", file, got, plain.Header.Get("ETag"))
		}
		s.must(http.StatusNotModified, "GET", file+"?v=0123456789ab", "", "Accept-Encoding", "identity", "If-None-Match", etag)
		// Gzipped, once, for those who take it.
		gz := s.must(http.StatusOK, "GET", link, "", "Accept-Encoding", "gzip, deflate, br")
		if gz.Header.Get("Content-Encoding") != "gzip" || gz.Header.Get("ETag") == etag {
			t.Errorf("%s gzipped: Content-Encoding %q, ETag %q (the plain one is %q)", link, gz.Header.Get("Content-Encoding"), gz.Header.Get("ETag"), etag)
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz.Body))
		if err != nil {
			t.Fatal(err)
		}
		unzipped, _ := io.ReadAll(zr)
		if !bytes.Equal(unzipped, identity.Body) {
			t.Errorf("%s: the gzipped file differs", link)
		}
		if !strings.Contains(strings.Join(gz.Header.Values("Vary"), ","), "Accept-Encoding") {
			t.Errorf("%s: Vary %q", link, gz.Header.Values("Vary"))
		}
		s.must(http.StatusNotModified, "GET", link, "", "Accept-Encoding", "gzip", "If-None-Match", gz.Header.Get("ETag"))
	}
	s.must(http.StatusNotFound, "GET", "/static/nothing.css", "")
	s.must(http.StatusNotFound, "GET", "/static/", "")
	if r := s.do("HEAD", links[0], "", "Accept-Encoding", "identity"); r.Status != http.StatusOK || r.Header.Get("ETag") == "" || len(r.Body) != 0 {
		t.Errorf("HEAD %s: %d, ETag %q, %d bytes", links[0], r.Status, r.Header.Get("ETag"), len(r.Body))
	}
}
