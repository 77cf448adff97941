package web_test

import (
	"context"
	"fmt"
	"idemlab/sim/lesson"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Each of the lessons is opened from the panel and played with Play at the
// fast speed, a few lessons to a lab, one after another (Set up empties the
// lab between them), in one language, while a tab of the same lab in the
// other language watches; the groups take turns at which language plays.
// Each must reach the article's outcome, shown as met by both panels, by
// the ledger's totals on both pages and in the lab's payments over the
// API; then Play must have stopped by itself. The end state of each lesson
// is a screenshot.
//
// The storm lesson plays apart (TestStormLessonsApart).
func TestBrowserLessonsPlay(t *testing.T) {
	t.Parallel()
	g := &together{t: t}
	dir := screenshotDir(t)
	all := slices.DeleteFunc(lessonsOn(os.Getenv("IDEMLAB_TEST_STORE") == "postgres"), stormy) // as startServer's store
	const perLab = 4
	for from := 0; from < len(all); from += perLab {
		group := all[from:min(from+perLab, len(all))]
		lang, other := "ru", "en"
		if from/perLab%2 == 1 {
			lang, other = other, lang
		}
		g.run(fmt.Sprintf("%s/%d-%d", lang, group[0].N, group[len(group)-1].N), func(t *testing.T) {
			playLessons(t, dir, group, lang, other, false)
		})
	}
	g.wait()
}

// The storm lesson, played as the others are but stepped by hand
// (playLesson), apart (stormLessons; seen in a run of the package: 45
// retries at the peak against jitter's 22).
// The last lesson's other views (large type, dark) follow it.
func browserStormLessonPlays(t *testing.T) {
	all := lessonsOn(os.Getenv("IDEMLAB_TEST_STORE") == "postgres")
	storms := stormLessons(t, all)
	if !stormy(all[len(all)-1]) {
		t.Fatal("the storm lesson is not the last lesson: the last lesson's views would follow another")
	}
	playLessons(t, screenshotDir(t), storms, "en", "ru", true)
}

// playLessons plays the lessons in one lab, one after another, in lang,
// while a tab in other watches; last adds the last lesson's other views.
func playLessons(t *testing.T, dir string, lessons []lesson.Lesson, lang, other string, last bool) {
	l := openLab(t, "", withParts())
	l.do(chromedp.EmulateViewport(1440, 900))
	l.navigate(l.url + "?lang=" + lang)
	w := l.twin("?lang=" + other)
	for _, ls := range lessons {
		l.playLesson(ls, lang)
		w.sawLesson(ls, other)
		l.shoot(dir, fmt.Sprintf("lesson-%d-%s-1440x900.png", ls.N, lang))
		w.shoot(dir, fmt.Sprintf("lesson-%d-%s-1440x900.png", ls.N, other))
	}
	if last {
		l.lastLessonViews(dir, lang)
		w.lastLessonViews(dir, other)
	}
}

// sawLesson checks that a tab watching a lesson another tab plays ends on
// the article's outcome too, in its own language.
func (l *labTab) sawLesson(ls lesson.Lesson, lang string) {
	l.t.Helper()
	met := map[string]string{"ru": "как в статье", "en": "as in the article"}[lang]
	if !l.poll(fmt.Sprintf(`document.querySelector("#lesson-state")?.dataset.lesson === "%d" && (%s?.textContent ?? "").trim().startsWith("✓") && %s.textContent.includes(%q)`,
		ls.N, jsTid("lesson-outcome"), jsTid("lesson-outcome"), met), 10*time.Second) {
		l.t.Errorf("lesson %d watched in %s: the panel says %q; want ✓ and %q", ls.N, lang, l.text("lesson-outcome"), met)
	}
	if !stormy(ls) {
		l.waitText("total-count", strconv.FormatInt(ls.Expect.Charges, 10))
		l.waitText("total-amount", strconv.FormatInt(ls.Expect.Total, 10))
	}
}

// playLesson opens a lesson from the panel, plays it at the fast speed and
// checks that it ends as the article does, on the page and over the API.
// The storm lesson is stepped through by hand: its steps are its storms,
// each a request of seconds, as Play's are (a race of lesson 3 is one of a
// second), and the half second Play waits after each of its ten steps
// would lengthen the tests that run apart by five.
func (l *labTab) playLesson(ls lesson.Lesson, lang string) {
	l.t.Helper()
	t := l.t
	met := map[string]string{"ru": "как в статье", "en": "as in the article"}[lang]
	// each lesson has the time a tab has: several in a row do not
	ctx, cancel := context.WithTimeout(l.tab, 90*time.Second)
	t.Cleanup(cancel)
	l.ctx = ctx
	choose := fmt.Sprintf(`[data-testid="lesson-choose"][value="%d"]`, ls.N)
	l.do(chromedp.Click(chromedp.CSS(choose)))
	l.waitJS(fmt.Sprintf(`document.querySelector("#lesson-state")?.dataset.lesson === "%d"`, ls.N), fmt.Sprintf("lesson %d to open", ls.N))
	wait := 40 * time.Second
	if stormy(ls) { // each storm is a step, run to its end
		wait = 80 * time.Second
		l.stepThrough(wait)
	} else {
		l.choose("lesson-speed", "500")
		l.do(chromedp.Click(tid("lesson-play")))
	}
	if !l.poll(`document.querySelector('[data-testid="lesson-outcome"]')?.dataset.state === "met"`+
		` && document.querySelector("#lesson-state").dataset.next === document.querySelector("#lesson-state").dataset.steps`, wait) {
		t.Fatalf("lesson %d did not reach the article's outcome: the panel says %q\n%s", ls.N, l.text("lesson-outcome"), l.state())
	}
	// (an action's own answer may briefly show what it read before the
	// email came; the page ends on the lab's latest state)
	if !l.poll(fmt.Sprintf(`(%s?.textContent ?? "").trim().startsWith("✓") && %s.textContent.includes(%q)`, jsTid("lesson-outcome"), jsTid("lesson-outcome"), met), 10*time.Second) {
		t.Errorf("lesson %d: the panel says %q; want ✓ and %q", ls.N, l.text("lesson-outcome"), met)
	}
	if stormy(ls) {
		return // its ledger is its storms'
	}
	// The ledger on the page and over the API agree with the article.
	l.waitText("total-count", strconv.FormatInt(ls.Expect.Charges, 10))
	l.waitText("total-amount", strconv.FormatInt(ls.Expect.Total, 10))
	if led := l.s.ledger(l.prefix); led.Count != ls.Expect.Charges || led.Total != ls.Expect.Total {
		t.Errorf("lesson %d: the API's ledger has %d charges, %d; want %d, %d", ls.N, led.Count, led.Total, ls.Expect.Charges, ls.Expect.Total)
	}
	got := l.s.must(http.StatusOK, "GET", l.prefix+"/lesson", "").JSON(t)
	if got["state"] != "met" || got["next"] != float64(len(ls.Steps)) {
		t.Errorf("lesson %d over the API: %v; want met after %d steps", ls.N, got, len(ls.Steps))
	}
	// Play stops at the end: Pause is off, Play is on again.
	l.waitJS(`document.querySelector('[data-testid="lesson-pause"]').disabled && !document.querySelector('[data-testid="lesson-play"]').disabled`, "Play to stop at the lesson's end")
	if n := l.count("double-charge-alert"); (n > 0) != hasDouble(ls) {
		t.Errorf("lesson %d: double-charge alert shown %v, want %v", ls.N, n > 0, hasDouble(ls))
	}
}

// stepThrough sets the open lesson up and presses Step for each of its
// steps, each once the step before has ended, within d in all.
func (l *labTab) stepThrough(d time.Duration) {
	l.t.Helper()
	l.do(chromedp.Click(tid("lesson-setup")))
	if !l.poll(`document.querySelector("#lesson-state")?.dataset.ready === "yes" && document.querySelector("#lesson-state").dataset.next === "0"`, d) {
		l.t.Fatalf("the lesson was not set up\n%s", l.state())
	}
	end := time.Now().Add(d)
	steps := eval[int](l, `+document.querySelector("#lesson-state").dataset.steps`)
	for n := 0; n < steps; n++ {
		l.do(chromedp.Click(tid("lesson-step")))
		if !l.poll(fmt.Sprintf(`document.querySelector("#lesson-state").dataset.next === "%d" && !document.querySelector("form.htmx-request")`, n+1), time.Until(end)) {
			l.t.Fatalf("step %d of %d did not end\n%s", n+1, steps, l.state())
		}
	}
}

// lastLessonViews looks at the last lesson's end from the back of the room
// (large type), in the dark and on a phone.
func (l *labTab) lastLessonViews(dir, lang string) {
	l.t.Helper()
	l.navigate(l.url + "?type=large")
	l.waitJS(`document.querySelector('[data-testid="lesson-outcome"]')?.dataset.state === "met"`, "the lesson's outcome after a reload")
	l.shoot(dir, fmt.Sprintf("lesson-last-%s-large-type-1440x900.png", lang))
	l.navigate(l.url + "?type=normal")
	l.colorScheme("dark")
	l.shoot(dir, fmt.Sprintf("lesson-last-%s-dark-1440x900.png", lang))
	l.colorScheme("")
	l.do(chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
	l.shoot(dir, fmt.Sprintf("lesson-last-%s-phone-375x812.png", lang))
	l.fitsWidth(lang+", a lesson open", 375, "body")
}

// hasDouble reports whether the lesson ends with an order charged twice.
func hasDouble(ls lesson.Lesson) bool {
	for _, o := range ls.Expect.Orders {
		if o.Charges > 1 {
			return true
		}
	}
	return false
}

// Pause stops the player between steps, and Step goes on by hand; the
// keyboard's p plays and pauses.
func TestBrowserLessonPauseAndStep(t *testing.T) {
	t.Parallel()
	l := openLab(t, "", withParts())
	l.do(chromedp.Click(chromedp.CSS(`[data-testid="lesson-choose"][value="5"]`)))
	l.waitJS(`document.querySelector("#lesson-state")?.dataset.lesson === "5"`, "lesson 5 to open")
	l.choose("lesson-speed", "3000")
	l.do(chromedp.Focus(tid("lesson-play")))
	l.do(chromedp.KeyEvent("p")) // the shortcut works only when no field has the focus
	l.waitJS(`document.querySelector("#lesson-state").dataset.next === "1"`, "the first step")
	l.do(chromedp.Click(tid("lesson-pause")))
	// Pause takes effect where the lesson is when the click lands: on a
	// busy machine the click may come after the next step was asked.
	l.waitJS(`!document.querySelector('[data-testid="lesson-play"]').disabled`, "Pause to take effect")
	paused := eval[string](l, `document.querySelector("#lesson-state").dataset.next`)
	if paused != "1" && paused != "2" {
		t.Fatalf("after Pause the lesson is at step %s; want 1, or 2 if the click came late", paused)
	}
	// for longer than a step's wait at this speed, the lesson stays put
	if !l.holds(fmt.Sprintf(`document.querySelector("#lesson-state").dataset.next === %q`, paused), 3500*time.Millisecond) {
		t.Fatalf("after Pause at step %s the lesson went on to step %s", paused, eval[string](l, `document.querySelector("#lesson-state").dataset.next`))
	}
	if eval[bool](l, `document.activeElement?.dataset.testid !== "lesson-play"`) {
		t.Errorf("after Pause the focus is on %q, want it on Play", eval[string](l, `document.activeElement?.outerHTML.slice(0, 80) ?? ""`))
	}
	if paused == "1" {
		l.do(chromedp.Click(tid("lesson-step")))
		l.waitJS(`document.querySelector("#lesson-state").dataset.next === "2"`, "the step pressed by hand")
		if got := l.text("total-count"); got != "1" {
			t.Errorf("after two steps of lesson 5 (the second purchase refused): total-count %q, want 1", got)
		}
	} else {
		l.do(chromedp.Click(tid("lesson-step")))
		l.waitJS(`document.querySelector("#lesson-state").dataset.next === "3"`, "the step pressed by hand")
	}
	// Play goes on from there to the end; at the end, Play plays it again.
	l.choose("lesson-speed", "500")
	l.do(chromedp.Click(tid("lesson-play")))
	met := `document.querySelector('[data-testid="lesson-outcome"]').dataset.state === "met" && document.querySelector("#lesson-state").dataset.next === "8"`
	if !l.poll(met, 30*time.Second) {
		t.Fatalf("Play did not finish lesson 5: %q\n%s", l.text("lesson-outcome"), l.state())
	}
	l.waitJS(`!document.querySelector('[data-testid="lesson-play"]').disabled`, "Play to stop at the end")
	l.do(chromedp.Click(tid("lesson-play")))
	l.waitJS(`document.querySelector("#lesson-state").dataset.next === "0"`, "Play at the end to set the lesson up again")
	if !l.poll(met, 30*time.Second) {
		t.Fatalf("Play did not replay lesson 5: %q\n%s", l.text("lesson-outcome"), l.state())
	}
}
