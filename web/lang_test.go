package web_test

import (
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"idemlab/views"
)

func getPage(t *testing.T, client *http.Client, url, acceptLanguage string) *goquery.Document {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if acceptLanguage != "" {
		req.Header.Set("Accept-Language", acceptLanguage)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// The page speaks the browser's language, and the switch sticks.
func TestPageLanguage(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, tc := range []struct{ accept, lang, h1 string }{
		{"ru-RU,ru;q=0.9,en;q=0.8", "ru", "Лаборатория"},
		{"ru", "ru", "Лаборатория"},
		{"en-GB", "en", "Lab"},
		{"de-DE, fr", "en", "Lab"},
		{"", "en", "Lab"},
		{"uk, ru;q=0.5", "ru", "Лаборатория"},
	} {
		doc := getPage(t, http.DefaultClient, s.URL+"/", tc.accept)
		if got := doc.Find("html").AttrOr("lang", ""); got != tc.lang {
			t.Errorf("Accept-Language %q: lang %q, want %q", tc.accept, got, tc.lang)
		}
		if got := doc.Find("h1").Contents().First().Text(); !strings.HasPrefix(strings.TrimSpace(got), tc.h1) {
			t.Errorf("Accept-Language %q: h1 %q, want %q", tc.accept, got, tc.h1)
		}
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	doc := getPage(t, client, s.URL+"/", "en")
	sw := doc.Find(`[data-testid="lang"]`)
	if sw.Length() != 1 || sw.AttrOr("lang", "") != "ru" {
		t.Fatalf("the language switch: %d elements, lang %q", sw.Length(), sw.AttrOr("lang", ""))
	}
	getPage(t, client, s.URL+sw.AttrOr("href", ""), "en")
	if got := getPage(t, client, s.URL+"/", "en").Find("html").AttrOr("lang", ""); got != "ru" {
		t.Errorf("after the switch, a page for an English browser is %q, want ru (the choice sticks)", got)
	}
}

// Every message has both languages, every key the code names exists, and
// no page shows a key instead of words.
func TestCatalogsAreComplete(t *testing.T) {
	t.Parallel()
	keys := views.Keys()
	for k, m := range keys {
		if strings.TrimSpace(m[0]) == "" || strings.TrimSpace(m[1]) == "" {
			t.Errorf("%s: en %q, ru %q", k, m[0], m[1])
		}
	}
	used := regexp.MustCompile(`(?:T\(ctx, |\bm\(|views\.M\()"([a-z][a-z0-9.-]+)"`)
	files, _ := filepath.Glob("../views/*.templ")
	more, _ := filepath.Glob("*.go")
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, match := range used.FindAllStringSubmatch(string(b), -1) {
			k := match[1]
			if strings.HasSuffix(k, ".") { // a prefix completed at run time
				continue
			}
			if _, ok := keys[k]; !ok {
				t.Errorf("%s names %q, which no catalog has", f, k)
			}
		}
	}
	s := startServer(t)
	api := s.newLab(`{"protection":"unique","key_strategy":"uuid","network":"response-lost"}`)
	op := s.operation(api, `{"order_id":"order-42","amount":1500}`)
	s.retry(api, op.ID, `{"fate":"ok"}`)
	for _, lang := range []string{"ru", "en"} {
		doc := getPage(t, http.DefaultClient, s.URL+"/labs/"+strings.TrimPrefix(api, "/api/v1/labs/")+"?lang="+lang, "")
		if html, _ := doc.Html(); regexp.MustCompile(`\[[a-z]+\.[a-z0-9.-]+\]`).MatchString(html) {
			t.Errorf("%s page shows a catalog key: %s", lang, regexp.MustCompile(`\[[a-z]+\.[a-z0-9.-]+\]`).FindString(html))
		}
	}
}

// The problem pages speak the reader's language; the JSON stays English.
func TestProblemPagesInBothLanguages(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	ru := getPage(t, http.DefaultClient, s.URL+"/problems/idempotency-key-reused", "ru")
	en := getPage(t, http.DefaultClient, s.URL+"/problems/idempotency-key-reused", "en")
	if got := ru.Find("h1").Text(); got != "Ключ уже использован с другим запросом" {
		t.Errorf("Russian page: %q", got)
	}
	if got := en.Find("h1").Text(); got != "Idempotency key reused with a different request" {
		t.Errorf("English page: %q", got)
	}
	r := s.do("GET", "/api/v1/labs/nope/settings", "", "Accept-Language", "ru")
	if got := r.JSON(t)["title"]; got != "Not found" {
		t.Errorf("JSON problem title %q, want English", got)
	}
}

// A reader of Russian meets no English on the page through lesson 1: every
// Latin word on it is a name (SQL, the settings' values, ids and keys).
func TestRussianPageHasNoEnglish(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	api := s.newLab(`{"protection":"none","key_strategy":"none","network":"response-lost"}`)
	labID := strings.TrimPrefix(api, "/api/v1/labs/")
	page := s.URL + "/labs/" + labID + "?lang=ru"
	check := func(state string) {
		for _, w := range englishOn(getPage(t, http.DefaultClient, page, ""), labID) {
			t.Errorf("%s: the Russian page shows %q", state, w)
		}
	}
	check("empty lab")
	op := s.operation(api, `{"order_id":"order-42","amount":1500}`)
	check("after a lost answer")
	s.retry(api, op.ID, `{"fate":"ok"}`)
	check("after the double charge")
}
