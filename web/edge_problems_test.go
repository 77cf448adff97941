package web_test

import (
	"net/http"
	"strings"
	"testing"
)

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
