package web_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// onScreen is an element that must be in view: a CSS selector and its name.
type onScreen struct{ sel, what string }

// The story of a lesson, on one screen: what a teacher at a projector needs
// in view while a lesson runs. Each entry is a CSS selector and its name;
// an entry absent from the page (no alert before a double charge, no next
// step once the lesson is done) is not looked for.
var oneScreen = []onScreen{
	{`#lesson-state li.next`, "the lesson's current step"},
	{`[data-testid="lesson-step"]`, "the lesson's Step button"},
	{`[data-testid="lesson-outcome"]`, "the lesson's outcome"},
	{`[data-testid="order-id"]`, "the order id"},
	{`[data-testid="amount"]`, "the amount"},
	{`[data-testid="fire-charge"]`, "Charge"},
	{`[data-testid="retry"]`, "Retry"},
	{`[data-testid="retry-without-key"]`, "Retry without a key"},
	{`[data-testid="race"]`, "Race"},
	{`[data-testid="network"]`, "the network fate"},
	{`[data-testid="total-count"]`, "the number of payments"},
	{`[data-testid="total-amount"]`, "the total"},
	{`[data-testid="double-charge-alert"]`, "the double-charge alert"},
	{`#sequence-diagram .diagram-caption`, "the diagram's caption"},
	{`#sequence-diagram:not(:has(.sd-queue)) .diagram-heads`, "the diagram's lane heads"},
	// the queue's part, when the drawing has one (its lanes' heads come
	// first in the page), else the newest attempt
	{`#sequence-diagram :is(.sd-queue .sd-lane-head, :nth-last-child(1 of [data-testid="attempt"]) .sd-heading)`, "the diagram's newest part"},
	{`[data-testid="lost-charge-alert"]`, "the lost-charge alert"},
	{`[data-testid="keys-panel"]`, "the keys panel"},
	{`[data-testid="server-fault"]`, "the server's fault"},
	{`[data-testid="advance-clock"]`, "the lab's clock"},
}

// The newest payment, in view in the dock beside the controls while a
// lesson of plain charges runs (lesson 1); a race's extra controls (lesson
// 3) take that room at a projector's sizes, and its payments are a tab's
// press away.
var newestPayment = onScreen{`#dock-payments:not([hidden]) tbody tr:first-child`, "the newest payment"}

// The newest attempt of lessons 1 and 3, whole: its request, what the
// server did and the answer (or its loss) fit the diagram's box at every
// size, so the step just taken is read without scrolling the drawing.
var newestAttempt = onScreen{`#sequence-diagram :nth-last-child(1 of [data-testid="attempt"])`, "the diagram's newest attempt, whole"}

// offScreen lists, as "what: rect", each present element of oneScreen that
// is not wholly inside the window, and the page's sideways scroll if any,
// once the page has settled: a live update that is still on its way (the
// stream's drawing after a form's answer) gets two seconds to arrive. What
// is still off then is said with the drawing's box and scroll.
func (l *labTab) offScreen(more ...onScreen) []string {
	l.t.Helper()
	var off []string
	for deadline := time.Now().Add(2 * time.Second); ; {
		if off = l.offScreenNow(more...); len(off) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			break
		}
		eval[bool](l, `new Promise(ok => setTimeout(() => ok(true), 100))`)
	}
	l.t.Logf("the drawing when %q: %s", off[0], eval[string](l, `(() => {
		const f = document.getElementById("sequence-diagram"), b = f && f.querySelector(".diagram-draw");
		if (!b) return "none";
		const a = b.getBoundingClientRect(), rows = f.querySelectorAll("[data-testid=attempt]"), r = rows.length ? rows[rows.length - 1].getBoundingClientRect() : a;
		return JSON.stringify({box: [a.top, a.bottom].map(Math.round), scrollTop: b.scrollTop, scrollHeight: b.scrollHeight, clientHeight: b.clientHeight,
			attempts: rows.length, newest: [r.top, r.bottom].map(Math.round), mark: f.dataset.op + "/" + f.dataset.h, focus: document.activeElement?.tagName});
	})()`))
	return off
}

// offScreenNow is offScreen's look, once.
func (l *labTab) offScreenNow(more ...onScreen) []string {
	l.t.Helper()
	return l.offScreenAmong(slices.Concat(oneScreen, more))
}

// offScreenAmong is offScreenNow's look at the elements of list alone.
func (l *labTab) offScreenAmong(list []onScreen) []string {
	l.t.Helper()
	var sels, whats []string
	for _, e := range list {
		sels = append(sels, e.sel)
		whats = append(whats, e.what)
	}
	// measured after two frames: what the reader sees once the page has
	// drawn what the last task changed (a box resized, a drawing scrolled)
	return eval[[]string](l, fmt.Sprintf(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))).then(() => {
		const sels = %s, whats = %s, out = [];
		sels.forEach((s, i) => {
			const el = document.querySelector(s);
			if (!el) return;
			const r = el.getBoundingClientRect();
			// a box that scrolls or clips its content hides what lies outside
			// it: the first of them (a drawing's own svg clips too) that cuts
			let c = null;
			for (let a = el.parentElement; a && !c; a = a.parentElement) {
				const b = a.getBoundingClientRect();
				if (getComputedStyle(a).overflowY !== "visible" && (r.top < b.top - 0.5 || r.bottom > b.bottom + 0.5)) c = b;
			}
			if (r.width === 0 || r.height === 0 || !el.checkVisibility())
				out.push(whats[i] + ": hidden");
			else if (r.top < 0 || r.left < 0 || r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5)
				out.push(whats[i] + ": " + [r.left, r.top, r.right, r.bottom].map(Math.round).join(",") + " in " + innerWidth + "×" + innerHeight);
			else if (c)
				out.push(whats[i] + ": " + [r.top, r.bottom].map(Math.round).join("–") + " cut by its box " + [c.top, c.bottom].map(Math.round).join("–"));
		});
		const wide = document.documentElement.scrollWidth - innerWidth;
		if (wide > 0) out.push("the page scrolls sideways by " + wide + " px");
		if (scrollY !== 0) out.push("the page is scrolled by " + scrollY + " px");
		const tall = document.documentElement.scrollHeight - innerHeight;
		if (tall > 0) {
			// name where it starts: the elements that end below the window
			// while their parent does not
			const over = [...document.body.querySelectorAll("*")].filter(el => {
				const b = el.getBoundingClientRect().bottom, p = el.parentElement.getBoundingClientRect().bottom;
				return b > innerHeight + 0.5 && p <= innerHeight + 0.5;
			}).slice(0, 3).map(el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + "." + [...el.classList].join(".") + " ends at " + Math.round(el.getBoundingClientRect().bottom));
			out.push("the page is " + tall + " px taller than the window (" + over.join("; ") + ")");
		}
		return out;
	})`, jsList(sels), jsList(whats)))
}

func jsList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// At a projector's sizes, in both languages, with lesson 1 or 3 open, every
// step of the lesson keeps its story on one screen without scrolling: the
// current step, the controls, the network fate, the totals and the alert,
// and the diagram. The lesson is played once per language and each state is
// looked at in every size (the layout is the style sheet's, so a resized
// window lays out as one opened at that size); each is a screenshot.
func TestBrowserOneScreen(t *testing.T) {
	t.Parallel()
	dir := screenshotDir(t)
	sizes := [][2]int64{{1920, 1080}, {1440, 900}, {1280, 720}}
	for _, lesson := range []int{1, 3} {
		t.Run(fmt.Sprintf("lesson-%d", lesson), func(t *testing.T) {
			t.Parallel()
			l := openLab(t, "")
			l.s.must(http.StatusOK, "POST", l.prefix+"/lesson", fmt.Sprintf(`{"lesson":%d}`, lesson))
			src := axeSource(t)
			for _, lang := range []string{"en", "ru"} {
				at := fmt.Sprintf("lesson %d, %s", lesson, lang)
				// each state in every size: off screen is an error, the
				// named moments are screenshots, axe looks at the end
				look := func(when, shot string, withAxe bool) {
					for _, size := range sizes {
						w, h := size[0], size[1]
						l.do(chromedp.EmulateViewport(w, h))
						// the resize is handled in the frame after: wait for two
						eval[bool](l, `new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => ok(true))))`)
						more := []onScreen{newestAttempt}
						if lesson == 1 {
							more = append(more, newestPayment)
						}
						for _, miss := range l.offScreen(more...) {
							t.Errorf("%s, %d×%d, %s: %s", at, w, h, when, miss)
						}
						for _, cut := range eval[[]string](l, clippedChoices) {
							t.Errorf("%s, %d×%d, %s: a choice cut without an ellipsis: %s", at, w, h, when, cut)
						}
						// the diagram's words readable: drawn at 0.7 of their size or more
						if scale := eval[float64](l, `document.querySelector(".diagram-svg").getScreenCTM().a`); scale < 0.7 {
							t.Errorf("%s, %d×%d, %s: the diagram is drawn at %.2f of its size", at, w, h, when, scale)
						}
						if shot != "" {
							l.shoot(dir, fmt.Sprintf("one-screen-lesson-%d-%s-%dx%d-%s.png", lesson, lang, w, h, shot))
						}
						if withAxe && w == 1440 {
							l.axe(src, fmt.Sprintf("%s, %d×%d", at, w, h))
						}
					}
				}
				l.do(chromedp.EmulateViewport(sizes[0][0], sizes[0][1]))
				l.navigate(l.url + "?lang=" + lang)
				l.do(chromedp.Click(tid("lesson-setup")))
				l.waitJS(`document.querySelector("#lesson-state")?.dataset.ready === "yes" && document.querySelector("#lesson-state").dataset.next === "0"`, at+": the lesson set up")
				steps := eval[int](l, `+document.querySelector("#lesson-state").dataset.steps`)
				for n := 0; n < steps; n++ {
					look(fmt.Sprintf("before step %d", n+1), "", false)
					l.do(chromedp.Click(tid("lesson-step")))
					l.waitJS(fmt.Sprintf(`document.querySelector("#lesson-state").dataset.next === "%d" && !document.querySelector("form.htmx-request")`, n+1), fmt.Sprintf("%s: step %d", at, n+1))
					if n == 0 {
						look("after step 1", "step-1", false)
					}
				}
				l.waitJS(`document.querySelector('[data-testid="lesson-outcome"]')?.dataset.state === "met"`, at+": the article's outcome")
				look("at the end", "end", true)
			}
		})
	}
}

// clippedChoices lists each shown select whose chosen option is wider than
// its box and is not ended with an ellipsis: cut mid-letter, a projected
// choice reads as another word.
const clippedChoices = `[...document.querySelectorAll("select")].filter(s => s.checkVisibility()).flatMap(s => {
	const st = getComputedStyle(s), c = document.createElement("canvas").getContext("2d");
	c.font = st.font;
	const text = s.selectedOptions[0]?.text ?? "";
	const room = s.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
	return c.measureText(text).width > room && st.textOverflow !== "ellipsis" ? [(s.id || s.name) + ": " + text] : [];
})`

// rects returns the rounded bounding boxes of the selectors, for comparing
// before and after.
func (l *labTab) rects(sels ...string) []string {
	l.t.Helper()
	return eval[[]string](l, fmt.Sprintf(`%s.map(s => { const r = document.querySelector(s)?.getBoundingClientRect();
		return r ? [r.left, r.top, r.width, r.height].map(Math.round).join(",") : "absent"; })`, jsList(sels)))
}

// The dock's panels switch in place: choosing one moves nothing else, the
// chosen panel shows within the window (opened upwards over the controls
// when the room at the column's foot is small), the tabs work from the
// keyboard (arrows, Escape), and a field of the Settings panel is a field
// of the settings form.
func TestBrowserDockSwitchesInPlace(t *testing.T) {
	t.Parallel()
	dir := screenshotDir(t)
	l := openLab(t, `{"network":"ok"}`)
	l.do(chromedp.Click(tid("fire-charge")))
	l.waitText("total-count", "1")
	still := []string{`[data-testid="fire-charge"]`, `[data-testid="sequence-diagram"]`, `[role=tablist]`, `[data-testid="total-count"]`, `[data-testid="lesson"]`}
	for _, lang := range []string{"en", "ru"} {
		for _, size := range [][2]int64{{1920, 1080}, {1440, 900}, {1280, 720}} {
			at := fmt.Sprintf("%s, %d×%d", lang, size[0], size[1])
			l.do(chromedp.EmulateViewport(size[0], size[1]))
			l.navigate(l.url + "?lang=" + lang)
			before := l.rects(still...)
			for _, tab := range []string{"log", "checklist", "settings", "payments"} {
				l.do(chromedp.Click(tid("tab-" + tab)))
				l.waitJS(fmt.Sprintf(`document.getElementById("dock-%s").checkVisibility() && %s.getAttribute("aria-selected") === "true"`, tab, jsTid("tab-"+tab)), at+": the "+tab+" panel")
				if after := l.rects(still...); strings.Join(after, " ") != strings.Join(before, " ") {
					t.Errorf("%s: choosing %s moved things: %v → %v", at, tab, before, after)
				}
				// the panel's first lines are in the window
				if !eval[bool](l, fmt.Sprintf(`(() => { const r = document.getElementById("dock-%s").getBoundingClientRect(), b = document.querySelector(".dock-body").getBoundingClientRect();
					return r.top >= 0 && r.top < innerHeight && b.height >= 80 && b.bottom <= innerHeight; })()`, tab)) {
					t.Errorf("%s: the %s panel is not in the window, or has less than 80 px: %s", at, tab, l.rects("#dock-"+tab, ".dock-body"))
				}
				if tab == "log" && size[1] == 720 {
					l.shoot(dir, fmt.Sprintf("dock-log-open-%s-%dx%d.png", lang, size[0], size[1]))
				}
				if tab == "settings" && size[1] == 720 {
					l.axe(axeSource(t), at+", the Settings panel open")
				}
				if tab == "settings" && size[0] != 1440 {
					l.shoot(dir, fmt.Sprintf("dock-settings-open-%s-%dx%d.png", lang, size[0], size[1]))
				}
				for _, miss := range l.offScreen() {
					t.Errorf("%s, with %s open: %s", at, tab, miss)
				}
				// Escape lowers a raised panel and gives the focus to its tab.
				l.do(chromedp.KeyEvent(kb.Escape))
				l.waitJS(`!document.querySelector(".dock").hasAttribute("data-raised")`, at+": Escape to lower the panel")
			}
		}
	}
	// From the keyboard: the arrows move along the tabs.
	l.do(chromedp.Focus(tid("tab-payments")), chromedp.KeyEvent(kb.ArrowRight))
	l.waitJS(jsTid("tab-log")+`.getAttribute("aria-selected") === "true" && document.activeElement === `+jsTid("tab-log"), "ArrowRight to choose Events")
	l.do(chromedp.KeyEvent(kb.End))
	l.waitJS(jsTid("tab-storm")+`.getAttribute("aria-selected") === "true"`, "End to choose Storm, the last tab")
	// The Settings panel's fields belong to the settings form.
	l.do(chromedp.Click(tid("tab-settings")), chromedp.SetValue(chromedp.CSS(`#max-attempts`), "7"))
	l.do(chromedp.Evaluate[chromedp.Void](`document.getElementById("max-attempts").dispatchEvent(new Event("change", {bubbles: true}))`))
	if !poll(10*time.Second, func() bool {
		retry, _ := l.settings()["retry"].(map[string]any)
		return fmt.Sprint(retry["max_attempts"]) == "7"
	}) {
		t.Fatalf("max attempts set in the Settings panel did not reach the lab: %v", l.settings())
	}
}
