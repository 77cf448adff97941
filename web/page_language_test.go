package web_test

import (
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// russianReader is a Russian reader of p's lab, on a page and a cookie of
// their own, for lesson n: the function it returns reads the page and
// fails the test for every English word it shows in state. The guided
// lessons read it after choosing, setting up, every step and at the end
// (guidedLesson): a Russian reader meets no English in any state of any
// lesson, text and the attributes people read (title, aria-label,
// placeholder, alt, value of buttons) alike. Names stay as they are: SQL
// words, settings' values, ids, keys and the HTTP header names the article
// uses.
func russianReader(t *testing.T, p *page, n int) func(state string) {
	ru := &page{t: t, s: p.s, path: p.path + "?lang=ru", client: pageClient()}
	lab := path.Base(p.path)
	return func(state string) {
		t.Helper()
		for _, w := range englishOn(ru.get(), lab) {
			t.Errorf("lesson %d, %s: the Russian page shows %q", n, state, w)
		}
	}
}

// russianNames are the Latin words a Russian page may show: names, not words.
var russianNames = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`Idempotency Lab English COMMIT INSERT SELECT UNIQUE ON CONFLICT DO NOTHING SQL
		UUID uuid SHA JSON CSV Markdown HTTP ok none check then insert unique on conflict replay per request natural hash
		full equal decorrelated random demo order op Idempotent Replayed Retry After Key SET NX Stripe IETF API RFC
		SMTP ack id Nats Msg Id JetStream PRIMARY KEY POST PUT DELETE Redis SQLite PX TTL idem PostgreSQL SERIALIZABLE
		READ COMMITTED SQLSTATE db postgres join addr`) {
		m[strings.ToLower(w)] = true
	}
	return m
}()

var (
	latinWord = regexp.MustCompile(`[A-Za-z]{2,}`)
	hexWord   = regexp.MustCompile(`^[0-9a-f]+$`)
	keyLike   = regexp.MustCompile(`\b[a-z]+(\.[a-z0-9-]+)+\b`) // an untranslated catalog key
)

// englishOn lists the English words and catalog keys a person reads on the
// page: its text and the attributes that are read out or shown. Code
// (identifiers, header names, media types) is names, not words.
func englishOn(doc *goquery.Document, lab string) []string {
	doc.Find("script, style, noscript, code, pre, kbd, samp").Remove()
	var parts []string // every text node apart: words must not run together
	doc.Find("body *").Contents().Each(func(_ int, n *goquery.Selection) {
		if goquery.NodeName(n) == "#text" {
			parts = append(parts, n.Text())
		}
	})
	doc.Find("[title], [aria-label], [placeholder], [alt], [data-on], [data-down], [data-closed], [data-copied]").Each(func(_ int, n *goquery.Selection) {
		for _, a := range []string{"title", "aria-label", "placeholder", "alt", "data-on", "data-down", "data-closed", "data-copied"} {
			if v, ok := n.Attr(a); ok && !strings.Contains(v, "://") {
				parts = append(parts, v)
			}
		}
	})
	var out []string
	for _, part := range parts {
		if k := keyLike.FindString(part); k != "" && !strings.Contains(part, "order-") {
			out = append(out, k)
		}
		for _, w := range latinWord.FindAllString(part, -1) {
			if !russianNames[strings.ToLower(w)] && !hexWord.MatchString(w) && !strings.Contains(lab, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// A page keeps its language when another tab switches the cookie: its live
// stream (?hl=) and its htmx requests (X-Page-Lang) say which it is, and
// neither changes the choice that sticks.
func TestRequestsSpeakTheirPagesLanguage(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	getPage(t, p.client, s.URL+p.path+"?lang=ru", "") // another tab switches to Russian
	req, _ := http.NewRequest("POST", s.URL+p.path+"/lesson", strings.NewReader(url.Values{"lesson": {"1"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-Page-Lang", "en") // from the English page
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	doc, _ := goquery.NewDocumentFromReader(resp.Body)
	if got := doc.Find(`[data-testid="lesson-name"]`).Text(); !strings.HasPrefix(got, "Lesson 1") {
		t.Errorf("the English page's request got %q, want English", got)
	}
	if got := getPage(t, p.client, s.URL+p.path, "").Find("html").AttrOr("lang", ""); got != "ru" {
		t.Errorf("after an English page's request the cookie says %q, want ru still", got)
	}
	doc = getPage(t, p.client, s.URL+p.path, "")
	if src := doc.Find("#live").AttrOr("hx-sse:connect", ""); !strings.HasSuffix(src, "/events?hl=ru") {
		t.Errorf("the Russian page's stream is %q, want it to ask for Russian", src)
	}
	if h := doc.Find("#lab").AttrOr("hx-headers:inherited", ""); !strings.Contains(h, `"X-Page-Lang":"ru"`) {
		t.Errorf("the Russian page's htmx requests carry %s, want X-Page-Lang ru", h)
	}
}

// The other pages a Russian reader meets speak Russian too: the side-by-side
// grid and the problem pages the API's errors link to.
func TestRussianOtherPagesHaveNoEnglish(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	getPage(t, p.client, s.URL+p.path+"?lang=ru", "")
	doc, _ := p.compare("")
	for _, w := range englishOn(doc, "") {
		t.Errorf("the Russian side-by-side page shows %q", w)
	}
	index := getPage(t, p.client, s.URL+"/problems", "")
	pages := index.Find(`main a[href^="/problems/"]`)
	if pages.Length() == 0 {
		t.Fatal("the problems index links to no problem page")
	}
	for _, w := range englishOn(index, "") {
		t.Errorf("/problems shows %q", w)
	}
	pages.Each(func(_ int, a *goquery.Selection) {
		href := a.AttrOr("href", "")
		for _, w := range englishOn(getPage(t, p.client, s.URL+href, ""), "") {
			t.Errorf("%s shows %q", href, w)
		}
	})
}

// A setting refused on a Russian page is explained in Russian, and a bad
// request's error page too: the words of sim's errors live in views, keyed
// by code («…не принята: must be an integer from 1 to 10» was seen).
func TestRefusalsSpeakThePagesLanguage(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	form := url.Values{"protection": {"none"}, "key_strategy": {"none"}, "network": {"ok"},
		"max_attempts": {"11"}, "base_ms": {"200"}, "cap_ms": {"2000"}, "jitter": {"full"},
		"client_timeout_ms": {"1000"}, "server_delay_ms": {"0"}, "check_gap_ms": {"100"}}
	for lang, want := range map[string]string{
		"ru": "Настройка retry.max_attempts не принята: должно быть целым числом от 1 до 10.",
		"en": "The setting retry.max_attempts was refused: must be an integer from 1 to 10.",
	} {
		resp, body := p.post(p.path+"/settings?lang="+lang, form, true)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, want) {
			t.Errorf("%s: %d, the notice does not say %q:\n%s", lang, resp.StatusCode, want, body)
		}
	}
	r := s.do("POST", "/api/v1/labs/demo/charges", `{"order_id":"","amount":0}`, "Accept", "text/html", "Accept-Language", "ru")
	for _, want := range []string{"должно быть длиной от 1 до 64 символов", "должно быть целым числом от 1 до 1000000000"} {
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), want) {
			t.Errorf("the Russian error page does not say %q:\n%s", want, r.Body)
		}
	}
}
