package web_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"idemlab/sim"
	"idemlab/sim/lesson"
)

// The race under a microscope on the page, driven through its data-testid
// hooks; the API tells what the database did. The preset's and the abort's
// lab: the race's protection, a key kept across retries.
const steppedSettings = `{"protection":"check-then-insert","key_strategy":"uuid"}`

// steppedWords are what the panel says, by language.
var steppedWords = map[string]map[string]string{
	"en": {"found-none": "found no payment", "sees-none": "no payment", "aborted": "aborted"},
	"ru": {"found-none": "не нашёл", "sees-none": "ни одного платежа", "aborted": "прервана"},
}

// Lesson 14's first race by hand, in both languages: the lesson's Step
// starts it, the key a runs A's SELECT, a click B's; mid-race the page is
// shot and axed; the panel's buttons run both INSERTs: order-42 twice.
func TestBrowserSteppedLessonByHand(t *testing.T) {
	t.Parallel()
	src := axeSource(t)
	dir := screenshotDir(t)
	for _, lang := range []string{"en", "ru"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			l := openLab(t, "")
			l.navigate(l.url + "?lang=" + lang)
			l.setUpLesson(14)
			l.waitJS(jsTid("stepped-start")+` !== null`, "lesson 14 to offer a stepped race")
			l.lessonStep(1) // step 0: a stepped race of two racers on order-42
			l.waitJS(racersReady("A", "B")+` && document.querySelector("#stepped .stepped-caption").textContent.includes("order-42")`, "two racers on order-42")
			l.do(chromedp.KeyEvent("a"))
			l.selectFoundNone("A", lang, 1)
			l.do(chromedp.Click(racerButton("B")))
			l.selectFoundNone("B", lang, 2)
			l.midRace(src, dir, lang)
			l.finishByHand(lang)
		})
	}
}

// selectFoundNone waits for racer's SELECT and checks that it found no
// payment (data and words), that INSERT is next (aria-current="step"),
// that its transaction sees nothing, and the diagram's statements.
func (l *labTab) selectFoundNone(racer, lang string, statements int) {
	l.t.Helper()
	l.waitPointDone(racer, "select")
	res := l.selectResult(racer)
	if res[0] != "found" || !strings.Contains(res[1], steppedWords[lang]["found-none"]) {
		l.t.Errorf("%s: %s's SELECT says %q (data-result %q); want found and %q", lang, racer, res[1], res[0], steppedWords[lang]["found-none"])
	}
	next := eval[[]string](l, fmt.Sprintf(`(() => { const p = %s.querySelector('[data-testid="point"].next');
		return [p?.dataset.point ?? "", p?.getAttribute("aria-current") ?? "(none)"]; })()`, racerJS(racer)))
	if next[0] != "insert" || next[1] != "step" {
		l.t.Errorf(`%s: after its SELECT, %s's next point is %q with aria-current=%q; want insert with aria-current="step"`, lang, racer, next[0], next[1])
	}
	if sees := eval[string](l, `(`+racerJS(racer)+`.querySelector('[data-testid="racer-sees"]')?.textContent ?? "").trim()`); !strings.Contains(sees, steppedWords[lang]["sees-none"]) {
		l.t.Errorf("%s: %s's transaction sees %q; want %q", lang, racer, sees, steppedWords[lang]["sees-none"])
	}
	if got := l.diagramSteps(); got != statements {
		l.t.Errorf("%s: after %s's SELECT the race has run %d statements; want %d", lang, racer, got, statements)
	}
}

// midRace looks at the page with both racers before their INSERT: the
// step buttons on, a screenshot at 1920×1080 and at 1280×720, and axe.
func (l *labTab) midRace(src, dir, lang string) {
	l.t.Helper()
	l.waitJS(racersReady("A", "B"), "both racers ready (Next on) before their INSERT")
	if l.count("stepped-preset") != 0 {
		l.t.Errorf("%s mid-race: the article's order is still offered after the racers have run statements", lang)
	}
	for _, size := range [][2]int64{{1920, 1080}, {1280, 720}} {
		l.do(chromedp.EmulateViewport(size[0], size[1]))
		l.logFirstScreen(fmt.Sprintf("%s mid-race at %d×%d", lang, size[0], size[1]))
		l.shoot(dir, fmt.Sprintf("stepped-mid-race-%s-%dx%d.png", lang, size[0], size[1]))
	}
	l.axe(src, "a stepped race mid-race ("+lang+")")
	l.do(chromedp.EmulateViewport(1440, 900))
}

// finishByHand runs both INSERTs (a click for A, the key b for B): order-42
// charged twice; then the lesson's own steps of that race (1 to 4) find its
// racers done and change nothing.
func (l *labTab) finishByHand(lang string) {
	l.t.Helper()
	pg := l.steppedRace().Postgres // there an INSERT and its COMMIT are two steps
	for _, p := range map[bool][]string{false: {"insert"}, true: {"insert", "commit"}}[pg] {
		l.do(chromedp.Click(racerButton("A")))
		l.waitPointDone("A", p)
	}
	l.waitText("total-count", "1")
	for range map[bool]int{false: 1, true: 2}[pg] {
		l.do(chromedp.KeyEvent("b"))
		l.waitJS(racerJS("B")+`.querySelector('[data-point="insert"]').classList.contains("done")`, "B's INSERT to run")
	}
	l.waitJS(jsTid("stepped-over")+` !== null`, "the race to be over")
	l.waitText("total-count", "2")
	race := l.steppedRace()
	if n := l.diagramSteps(); n < 4 || n != len(race.Log) {
		l.t.Errorf("%s: at the race's end the diagram draws %d statements; the race ran %d (want at least 4)", lang, n, len(race.Log))
	}
	if eval[bool](l, jsTid("stepped")+`.hidden || (`+jsTid("stepped-start")+`?.disabled ?? true)`) {
		l.t.Errorf("%s: after the race the panel is hidden, or no new stepped race is offered", lang)
	}
	for next := 2; next <= 5; next++ {
		l.lessonStep(next)
	}
	l.waitText("total-count", "2")
	if got := orderCharges(l.s.ledger(l.prefix)); got["order-42"] != 2 || len(got) != 1 {
		l.t.Errorf("%s: after the race by hand the ledger charges %v; want order-42 twice", lang, got)
	}
}

// Lesson 14 set up and played with Play: three races, the last two under
// UNIQUE and with A first; the article's outcome, 4 charges, ₽6,000.
func TestBrowserSteppedLessonPlay(t *testing.T) {
	t.Parallel()
	ls, err := lesson.Number(14)
	if err != nil {
		t.Fatal(err)
	}
	l := openLab(t, "")
	l.setUpLesson(14)
	l.playLesson(ls, "en") // Play, the outcome met with ✓, 4 charges, 6000, over the API too
	if got := fmt.Sprint(orderCharges(l.s.ledger(l.prefix))); got != "map[order-42:2 order-43:1 order-44:1]" {
		t.Errorf("lesson 14 played: charges by order %s; want order-42 twice, order-43 and order-44 once", got)
	}
	l.waitJS(jsTid("stepped-over")+` !== null`, "the last race to be over")
	// the last race: A ran to its end before B started, so B found A's payment
	race, b := l.steppedRace(), l.selectResult("B")
	if i := slices.IndexFunc(race.Log, func(e sim.StepLog) bool { return e.Racer == "B" }); race.OrderID != "order-44" || b[0] != "found" ||
		!strings.Contains(b[1], "1") || i < 0 || race.Log[i].Point != sim.PointSelect || race.Log[i].RowsFound() != 1 {
		t.Errorf("lesson 14's last race: order %s, B's SELECT %q, log %+v; want order-44, B's SELECT first finding 1 payment", race.OrderID, b, race.Log)
	}
	// its end on one screen at a projector's sizes: the race's end and the diagram it heads
	end := []onScreen{{`[data-testid="stepped-over"]`, "the race's end"},
		{`[data-racer="A"] [data-testid="racer-state"]`, "A's answer"}, {`[data-racer="B"] [data-testid="racer-state"]`, "B's answer"},
		{`[data-testid="double-charge-alert"]`, "the double-charge alert"},
		{`#sequence-diagram .diagram-caption`, "the diagram's caption"}, {`#sequence-diagram .diagram-heads`, "the diagram's lane heads"}}
	for _, size := range [][2]int64{{1920, 1080}, {1440, 900}, {1280, 720}} {
		l.do(chromedp.EmulateViewport(size[0], size[1]))
		for _, miss := range l.offScreenAmong(end) {
			t.Errorf("lesson 14's end at %d×%d: %s", size[0], size[1], miss)
		}
	}
}

// The article's order in one click, on a lab set to check-then-insert
// with a kept key over the API: both SELECTs find nothing, both INSERTs
// write, two charges.
func TestBrowserSteppedPreset(t *testing.T) {
	t.Parallel()
	l := openLab(t, steppedSettings)
	l.startStepped()
	l.do(chromedp.Click(tid("stepped-preset")))
	l.waitJS(jsTid("stepped-over")+` !== null`, "the preset's race to be over")
	l.waitText("total-count", "2")
	for _, r := range []string{"A", "B"} {
		if res := l.selectResult(r); res[0] != "found" || !strings.Contains(res[1], steppedWords["en"]["found-none"]) {
			t.Errorf("the preset: %s's SELECT says %q; want found, %q", r, res, steppedWords["en"]["found-none"])
		}
	}
	if log := l.steppedRace().Log; len(log) < 4 || log[0].Racer != "A" || log[1].Racer != "B" || log[1].Point != sim.PointSelect {
		t.Errorf("the preset ran %+v; want A's SELECT, then B's, then the INSERTs", log)
	}
	l.diagramSteps()
	if led := l.s.ledger(l.prefix); led.Count != 2 {
		t.Errorf("the preset under check-then-insert: %d payments; want 2", led.Count)
	}
}

// Abort after A's SELECT: the race is over, said to be aborted, and no
// payment is written under check-then-insert.
func TestBrowserSteppedAbort(t *testing.T) {
	t.Parallel()
	l := openLab(t, steppedSettings)
	l.startStepped()
	l.do(chromedp.Click(racerButton("A")))
	l.waitPointDone("A", "select")
	l.do(chromedp.Click(tid("stepped-abort")))
	l.waitJS(jsTid("stepped-over")+` !== null`, "the aborted race to be over")
	if got := l.text("stepped-over"); !strings.Contains(got, steppedWords["en"]["aborted"]) {
		t.Errorf("after Abort the panel says %q; want it to say %q", got, steppedWords["en"]["aborted"])
	}
	if n := eval[int](l, `document.querySelectorAll('[data-testid="step-racer"], [data-testid="stepped-abort"]').length`); n != 0 {
		t.Errorf("after Abort %d step or abort buttons remain", n)
	}
	if race, led := l.steppedRace(), l.s.ledger(l.prefix); !race.Over || race.Aborted != sim.AbortAsked || led.Count != 0 {
		t.Errorf("after Abort: over %v, aborted %q, %d payments; want true, %q, 0", race.Over, race.Aborted, led.Count, sim.AbortAsked)
	}
	l.waitText("total-count", "0")
}

// startStepped presses Start in a lab with no lesson open: the panel is
// hidden then (SPEC), so lesson 3 is opened first, not set up.
func (l *labTab) startStepped() {
	l.t.Helper()
	if !eval[bool](l, jsTid("stepped")+`?.hidden ?? false`) {
		l.t.Errorf("with no lesson open and no race, the stepped panel is shown; SPEC says hidden")
	}
	l.do(chromedp.Click(chromedp.CSS(`[data-testid="lesson-choose"][value="3"]`)))
	l.waitJS(jsTid("stepped-start")+` !== null`, "lesson 3 to offer a stepped race")
	l.waitSettings(map[string]string{"protection": "check-then-insert", "key_strategy": "uuid"})
	l.do(chromedp.Click(tid("stepped-start")))
	l.waitJS(racersReady("A", "B")+` && `+jsTid("stepped-preset")+` !== null`, "two fresh racers and the article's order")
}

// setUpLesson opens lesson n from the panel and sets it up.
func (l *labTab) setUpLesson(n int) {
	l.t.Helper()
	l.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-testid="lesson-choose"][value="%d"]`, n))))
	l.waitJS(fmt.Sprintf(`document.querySelector("#lesson-state")?.dataset.lesson === "%d"`, n), fmt.Sprintf("lesson %d to open", n))
	l.do(chromedp.Click(tid("lesson-setup")))
	l.waitJS(`document.querySelector("#lesson-state")?.dataset.ready === "yes"`, fmt.Sprintf("lesson %d to be set up", n))
}

// lessonStep presses the lesson's Step and waits until next is its next step.
func (l *labTab) lessonStep(next int) {
	l.t.Helper()
	l.do(chromedp.Click(tid("lesson-step")))
	l.waitJS(fmt.Sprintf(`document.querySelector("#lesson-state")?.dataset.next === "%d"`, next), fmt.Sprintf("the lesson to reach step %d", next))
}

// racerJS is racer name's column, in JavaScript.
func racerJS(name string) string {
	return fmt.Sprintf(`document.querySelector('[data-testid="racer"][data-racer=%q]')`, name)
}

// selectResult is racer's SELECT as the page says it: its data-result and
// its words ("" when it has not run).
func (l *labTab) selectResult(racer string) []string {
	l.t.Helper()
	return eval[[]string](l, fmt.Sprintf(`(() => { const r = %s?.querySelector('[data-point="select"] [data-testid="point-result"]');
		return [r?.dataset.result ?? "", (r?.textContent ?? "").trim()]; })()`, racerJS(racer)))
}

// racerButton is racer name's Next button.
func racerButton(name string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`[data-testid="step-racer"][data-key=%q]`, strings.ToLower(name)))
}

// racersReady is true, in JavaScript, when each named racer stands at a
// point with its Next button on.
func racersReady(names ...string) string {
	var conds []string
	for _, n := range names {
		conds = append(conds, fmt.Sprintf(`%s?.dataset.state === "ready" && %s.querySelector('[data-testid="step-racer"]')?.disabled === false`, racerJS(n), racerJS(n)))
	}
	return strings.Join(conds, " && ")
}

// waitPointDone waits until racer's point has run and the racer stands
// still again (ready at its next point, or done).
func (l *labTab) waitPointDone(racer, point string) {
	l.t.Helper()
	l.waitJS(fmt.Sprintf(`%s?.querySelector('[data-testid="point"][data-point=%q]')?.classList.contains("done") && /^(ready|done)$/.test(%s.dataset.state)`,
		racerJS(racer), point, racerJS(racer)), racer+"'s "+point+" to run")
}

// steppedRace is the race the page shows, as the API tells it.
func (l *labTab) steppedRace() sim.SteppedRace {
	l.t.Helper()
	id := eval[string](l, `document.querySelector("#stepped-state")?.dataset.race ?? ""`)
	if id == "" {
		l.t.Fatalf("the page shows no stepped race\n%s", l.state())
	}
	return decode[sim.SteppedRace](l.t, l.s.must(http.StatusOK, "GET", l.prefix+"/stepped-races/"+id, "").Body)
}

// diagramSteps waits until the sequence diagram draws one step mark per
// statement the race has run (as the API's log counts them) and returns
// how many.
func (l *labTab) diagramSteps() int {
	l.t.Helper()
	want := len(l.steppedRace().Log)
	marks := `document.querySelectorAll('[data-testid="sequence-diagram"] [data-testid="diagram-steps"] g[data-mark="step"]').length`
	if !l.poll(fmt.Sprintf(`%s === %d`, marks, want), 10*time.Second) {
		l.t.Errorf("the diagram draws %d step marks; the race has run %d statements", eval[int](l, marks), want)
	}
	return want
}
