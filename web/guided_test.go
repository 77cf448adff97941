package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"idemlab/sim/lesson"
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
// The storm lesson plays apart (TestStormLessonsApart). A Russian reader
// of each lab meets no English on the way (russianReader).
func TestGuidedLessonsThroughForms(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	for _, ls := range slices.DeleteFunc(s.lessons(), stormy) {
		t.Run(fmt.Sprintf("lesson-%d", ls.N), func(t *testing.T) { guidedLesson(t, s, ls) })
	}
}

// The storm lesson through the forms, apart (stormLessons).
func guidedLessonStormThroughForms(t *testing.T) {
	s := startServer(t, withParts())
	for _, ls := range stormLessons(t, s.lessons()) {
		t.Run(fmt.Sprintf("lesson-%d", ls.N), func(t *testing.T) { guidedLesson(t, s, ls) })
	}
}

// guidedLesson plays lesson ls in a new lab of s through the forms and
// checks its end.
func guidedLesson(t *testing.T, s *testServer, ls lesson.Lesson) {
	p, _ := openPage(t, s, "")
	ru := russianReader(t, p, ls.N)
	ru("before the lesson")
	form := func(action string, kv ...string) { t.Helper(); p.submit(p.path+action, kv...) }
	form("/lesson", "lesson", strconv.Itoa(ls.N))
	ru("chosen")
	if got := readLesson(t, p.get()); got.n != ls.N || got.ready || got.state != "idle" {
		t.Fatalf("after choosing: %+v, want lesson %d, not set up, idle", got, ls.N)
	}
	form("/lesson/setup")
	// the log is the hub's, which hears of the set-up on its own
	// goroutine: a page read at once may not have the line yet
	var log string
	if !poll(5*time.Second, func() bool {
		log = text(p.get(), "event-log")
		return strings.Contains(log, fmt.Sprintf("Lesson %d set up", ls.N))
	}) {
		t.Errorf("the event log after Set up says %q; want it to name the lesson", log)
	}
	ru("set up")
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
		ru(fmt.Sprintf("after step %d", i+1))
	}
	doc := p.get()
	// What goes through the broker ends a moment after the last step.
	poll(30*time.Second, func() bool {
		doc = p.get()
		return readLesson(t, doc).state == "met"
	})
	if got := readLesson(t, doc); got.next != len(ls.Steps) || got.state != "met" {
		t.Errorf("after the last step: %+v; want met\noutcome: %s", got, text(doc, "lesson-outcome"))
	}
	ru("at the end")
	if !stormy(ls) { // a storm lesson's ledger is its storms'
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
		want := map[int]string{1: "too much", 3: "too much", 4: "too much", 5: "no purchase was charged twice", 9: "too much", 11: "too much", 13: "too much", 14: "too much"}[ls.N]
		if (want == "") != (alert == "") || !strings.Contains(alert, want) {
			t.Errorf("double-charge alert %q, want one saying %q", alert, want)
		}
	}
	if got := text(doc, "lesson-outcome"); !strings.HasPrefix(got, "✓") || !strings.Contains(got, "as in the article") {
		t.Errorf("the panel says %q; want it to start with ✓ and say \"as in the article\"", got)
	}
	// The report taken home says how the lesson went.
	report := string(s.must(http.StatusOK, "GET", p.path+"/export/report.md", "", "Accept-Language", "ru").Body)
	if want := fmt.Sprintf("**Урок %d · ", ls.N); !strings.Contains(report, want) || !strings.Contains(report, "как в статье") {
		t.Errorf("the report has no line %q…как в статье:\n%s", want, report)
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
