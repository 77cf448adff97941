package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"idemlab/sim/lesson"
	"idemlab/views"
)

// lessonPanel reads the lesson panel of a page.
type lessonPanel struct {
	n, next, steps int
	ready          bool
	state          string
}

func readLesson(t *testing.T, doc *goquery.Document) lessonPanel {
	t.Helper()
	el := doc.Find("#lesson-state")
	if el.Length() != 1 {
		t.Fatal("the page has no lesson panel")
	}
	num := func(name string) int {
		v, _ := el.Attr(name)
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("lesson panel %s = %q", name, v)
		}
		return n
	}
	ready, _ := el.Attr("data-ready")
	state, _ := doc.Find(`[data-testid="lesson-outcome"]`).Attr("data-state")
	return lessonPanel{n: num("data-lesson"), next: num("data-next"), steps: num("data-steps"), ready: ready == "yes", state: state}
}

// submit posts one of the page's forms as a browser without JavaScript
// does (its fields) and expects to be sent back to the page.
func (p *page) submit(action string, kv ...string) {
	p.t.Helper()
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	if resp, body := p.post(action, v, false); resp.StatusCode != http.StatusSeeOther {
		p.t.Fatalf("POST %s: %d %s", action, resp.StatusCode, body)
	}
}

// Each lesson, played step by step through the page's plain forms (no
// JavaScript), ends as the article says, and the panel says so. The panel
// is "met" only at the end: no lesson's outcome shows before its last step.
func TestGuidedLessonsThroughForms(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	for _, ls := range s.lessons() {
		t.Run(fmt.Sprintf("lesson-%d", ls.N), func(t *testing.T) {
			p, _ := openPage(t, s, "")
			form := func(action string, kv ...string) { t.Helper(); p.submit(p.path+action, kv...) }
			form("/lesson", "lesson", strconv.Itoa(ls.N))
			if got := readLesson(t, p.get()); got.n != ls.N || got.ready || got.state != "idle" {
				t.Fatalf("after choosing: %+v, want lesson %d, not set up, idle", got, ls.N)
			}
			form("/lesson/setup")
			if got := text(p.get(), "event-log"); !strings.Contains(got, fmt.Sprintf("Lesson %d set up", ls.N)) {
				t.Errorf("the event log after Set up says %q; want it to name the lesson", got)
			}
			api := "/api/v1/labs/" + path.Base(p.path)
			settings := s.must(http.StatusOK, "GET", api+"/settings", "").JSON(t)
			if settings["protection"] != string(ls.Settings.Protection) || settings["key_strategy"] != string(ls.Settings.KeyStrategy) {
				t.Errorf("set up: protection %v, key %v; want %s, %s", settings["protection"], settings["key_strategy"], ls.Settings.Protection, ls.Settings.KeyStrategy)
			}
			for i := range ls.Steps {
				got := readLesson(t, p.get())
				if !got.ready || got.next != i || got.steps != len(ls.Steps) || got.state != "pending" {
					t.Fatalf("before step %d: %+v, want ready, next %d of %d, pending", i, got, i, len(ls.Steps))
				}
				form("/lesson/step", "at", strconv.Itoa(i))
			}
			doc := p.get()
			// What goes through the broker ends a moment after the last step.
			for deadline := time.Now().Add(30 * time.Second); readLesson(t, doc).state != "met" && time.Now().Before(deadline); doc = p.get() {
				time.Sleep(50 * time.Millisecond)
			}
			if got := readLesson(t, doc); got.next != len(ls.Steps) || got.state != "met" {
				t.Errorf("after the last step: %+v; want met\noutcome: %s", got, text(doc, "lesson-outcome"))
			}
			if l := s.ledger(api); l.Count != ls.Expect.Charges || l.Total != ls.Expect.Total {
				t.Errorf("ledger: %d charges, %d ₽; the article: %d, %d", l.Count, l.Total, ls.Expect.Charges, ls.Expect.Total)
			}
			if got := text(doc, "total-count"); got != strconv.FormatInt(ls.Expect.Charges, 10) {
				t.Errorf("total-count %q, want %d", got, ls.Expect.Charges)
			}
			// The total's text is the bare number; its thousands are set apart
			// by the stylesheet, in spans.
			total := doc.Find(`[data-testid="total-amount"]`)
			if html, _ := total.Html(); total.Text() != strconv.FormatInt(ls.Expect.Total, 10) || !strings.Contains(html, `<span class="grp">`) {
				t.Errorf("total-amount %q (%s), want the bare number with its groups in spans", total.Text(), html)
			}
			// An order charged twice for one purchase is money taken twice; an
			// order charged once for each of its purchases (lesson 5) is not.
			alert := text(doc, "double-charge-alert")
			want := map[int]string{1: "too much", 3: "too much", 4: "too much", 5: "no purchase was charged twice", 9: "too much", 11: "too much", 13: "too much"}[ls.N]
			if (want == "") != (alert == "") || !strings.Contains(alert, want) {
				t.Errorf("double-charge alert %q, want one saying %q", alert, want)
			}
			if got := text(doc, "lesson-outcome"); !strings.HasPrefix(got, "✓") || !strings.Contains(got, "as in the article") {
				t.Errorf("the panel says %q; want it to start with ✓ and say \"as in the article\"", got)
			}
			// The report taken home says how the lesson went.
			report := string(s.must(http.StatusOK, "GET", p.path+"/export/report.md", "", "Accept-Language", "ru").Body)
			if want := fmt.Sprintf("**Урок %d · ", ls.N); !strings.Contains(report, want) || !strings.Contains(report, "как в статье") {
				t.Errorf("the report has no line %q…как в статье:\n%s", want, report)
			}
		})
	}
}

// The panel compares with the ledger, not with the steps it took: a lesson
// played with a change the article did not make is shown as different.
func TestGuidedLessonNoticesADifferentOutcome(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	post := func(action string, kv ...string) { t.Helper(); p.submit(p.path+action, kv...) }
	post("/lesson", "lesson", "1")
	post("/lesson/setup")
	// The learner turns protection on before the retry: no double charge.
	api := "/api/v1/labs/" + path.Base(p.path)
	s.must(http.StatusOK, "PATCH", api+"/settings", `{"protection":"replay","key_strategy":"uuid"}`)
	post("/lesson/step", "at", "0")
	post("/lesson/step", "at", "1")
	doc := p.get()
	if got := readLesson(t, doc); got.state != "differs" {
		t.Errorf("state %q, want differs: the ledger has 1 charge, the article 2\n%s", got.state, text(doc, "lesson-outcome"))
	}
	if got := text(doc, "lesson-outcome"); !strings.HasPrefix(got, "✗") {
		t.Errorf("the panel says %q, want it to start with ✗", got)
	}
}

// A step is taken once, however often it is sent: two browsers pressing
// Step together, or a post retried after a lost answer, run it once.
func TestLessonStepIsTakenOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	s.must(http.StatusOK, "POST", lab+"/lesson", `{"lesson":1}`)
	s.must(http.StatusOK, "POST", lab+"/lesson/setup", "")
	done := make(chan response, 8)
	for range 8 {
		go func() { done <- s.do("POST", lab+"/lesson/step", `{"at":0}`) }()
	}
	taken := 0
	for range 8 {
		r := <-done
		if r.Status != http.StatusOK {
			t.Fatalf("step: %d %s", r.Status, r.Body)
		}
		if r.JSON(t)["taken"] == true {
			taken++
		}
	}
	if taken != 1 {
		t.Errorf("%d of 8 copies say they took the step, want 1", taken)
	}
	got := s.must(http.StatusOK, "GET", lab+"/lesson", "").JSON(t)
	if got["next"] != float64(1) {
		t.Errorf("after 8 copies of step 0: next = %v, want 1", got["next"])
	}
	ops := s.must(http.StatusOK, "GET", lab+"/operations", "").JSON(t)
	if n := len(ops["operations"].([]any)); n != 1 {
		t.Errorf("%d operations, want 1", n)
	}
	if l := s.ledger(lab); l.Count != 1 {
		t.Errorf("%d charges after step 0 of lesson 1, want 1", l.Count)
	}
}

// Refused lesson requests say why and change nothing.
func TestLessonRefusals(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	for _, tc := range []struct {
		path, body string
		status     int
		field      string
	}{
		{"/lesson/step", `{"at":0}`, http.StatusBadRequest, "lesson"},                                   // no lesson open
		{"/lesson/setup", ``, http.StatusBadRequest, "lesson"},                                          // no lesson open
		{"/lesson", fmt.Sprintf(`{"lesson":%d}`, len(lesson.All())+1), http.StatusBadRequest, "lesson"}, // no such lesson
		{"/lesson", `{"lesson":-1}`, http.StatusBadRequest, "lesson"},                                   // no such lesson
		{"/lesson", `{}`, http.StatusBadRequest, "lesson"},                                              // missing
		{"/lesson", `{"lesson":"1"}`, http.StatusBadRequest, "lesson"},                                  // not a number
		{"/lesson", `{"lesson":1,"x":2}`, http.StatusBadRequest, "x"},                                   // unknown field
		{"/lesson/step", `{}`, http.StatusBadRequest, "at"},                                             // missing
		{"/lesson/step", `{"at":1.5}`, http.StatusBadRequest, "at"},                                     // not whole
	} {
		r := s.do("POST", lab+tc.path, tc.body)
		if r.Status != tc.status || !strings.Contains(string(r.Body), `"`+tc.field+`"`) {
			t.Errorf("POST %s %s: %d %s; want %d naming %q", tc.path, tc.body, r.Status, r.Body, tc.status, tc.field)
		}
	}
	s.must(http.StatusOK, "POST", lab+"/lesson", `{"lesson":2}`)
	r := s.do("POST", lab+"/lesson/step", `{"at":0}`)
	if why := views.English.RuleText(lesson.NotSetUp, ""); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), why) {
		t.Errorf("a step before set-up: %d %s; want 400 %q", r.Status, r.Body, why)
	}
	if l := s.ledger(lab); l.Count != 0 {
		t.Errorf("refused requests charged %d times", l.Count)
	}
	// The page's forms refuse with a notice in the page's language.
	p, _ := openPage(t, s, "")
	v := url.Values{"at": {"0"}}
	resp, body := p.post(p.path+"/lesson/step", v, true)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "Choose one of the lessons first") {
		t.Errorf("step form without a lesson: %d %s", resp.StatusCode, body)
	}
	for _, n := range []string{strconv.Itoa(len(lesson.All()) + 1), "-1", "one", ""} {
		resp, body := p.post(p.path+"/lesson", url.Values{"lesson": {n}}, true)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, fmt.Sprintf("the lessons are 1 to %d", len(lesson.All()))) {
			t.Errorf("lesson form with %q: %d %s", n, resp.StatusCode, body)
		}
	}
}

// A Russian reader meets no English in any state of any lesson: the page
// is scanned after choosing, setting up and every step, text and the
// attributes people read (title, aria-label, placeholder, alt, value of
// buttons) alike. Names stay as they are: SQL words, settings' values,
// ids, keys and the HTTP header names the article uses.
func TestRussianLessonsHaveNoEnglish(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	for _, ls := range s.lessons() {
		t.Run(fmt.Sprintf("lesson-%d", ls.N), func(t *testing.T) {
			p, _ := openPage(t, s, "")
			p.path += "?lang=ru"
			page := p.path
			lab := path.Base(strings.TrimSuffix(page, "?lang=ru"))
			scan := func(state string) {
				t.Helper()
				for _, w := range englishOn(p.get(), lab) {
					t.Errorf("lesson %d, %s: the Russian page shows %q", ls.N, state, w)
				}
			}
			post := func(action string, kv ...string) { t.Helper(); p.submit("/labs/"+lab+action, kv...) }
			scan("before the lesson")
			post("/lesson", "lesson", strconv.Itoa(ls.N))
			scan("chosen")
			post("/lesson/setup")
			scan("set up")
			for i := range ls.Steps {
				post("/lesson/step", "at", strconv.Itoa(i))
				scan(fmt.Sprintf("after step %d", i+1))
			}
		})
	}
}

// russianNames are the Latin words a Russian page may show: names, not words.
var russianNames = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`Idempotency Lab English COMMIT INSERT SELECT UNIQUE ON CONFLICT DO NOTHING SQL
		UUID uuid SHA JSON CSV Markdown HTTP ok none check then insert unique on conflict replay per request natural hash
		full equal decorrelated random demo order op Idempotent Replayed Retry After Key SET NX Stripe IETF API RFC
		SMTP ack id Nats Msg Id JetStream PRIMARY KEY POST PUT DELETE Redis SQLite PX TTL idem PostgreSQL SERIALIZABLE
		READ COMMITTED SQLSTATE db postgres`) {
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

// A class's place in a lesson survives a restart of the server.
func TestLessonSurvivesRestart(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lab.db")
	a := startServer(t, withDB(db))
	lab := a.newLab("")
	a.must(http.StatusOK, "POST", lab+"/lesson", `{"lesson":2}`)
	a.must(http.StatusOK, "POST", lab+"/lesson/setup", "")
	a.must(http.StatusOK, "POST", lab+"/lesson/step", `{"at":0}`)
	a.Stop()
	b := startServer(t, withDB(db))
	if got := b.must(http.StatusOK, "GET", lab+"/lesson", "").JSON(t); got["lesson"] != float64(2) || got["ready"] != true || got["next"] != float64(1) {
		t.Fatalf("after a restart: %v, want lesson 2, ready, next 1", got)
	}
	got := b.must(http.StatusOK, "POST", lab+"/lesson/step", `{"at":1}`).JSON(t)
	if got["state"] != "met" {
		t.Errorf("lesson 2 finished after the restart: %v, want met", got)
	}
	// A reset keeps the lesson open but asks for a new set-up, and says so after a restart too.
	b.must(http.StatusNoContent, "POST", lab+"/reset", "")
	b.Stop()
	c := startServer(t, withDB(db))
	if got := c.must(http.StatusOK, "GET", lab+"/lesson", "").JSON(t); got["lesson"] != float64(2) || got["ready"] != false || got["next"] != float64(0) {
		t.Errorf("after a reset and a restart: %v, want lesson 2, not set up, next 0", got)
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
