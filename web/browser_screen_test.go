package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The story of a lesson, on one screen: what a teacher at a projector needs
// in view while a lesson runs. Each entry is a CSS selector and its name;
// an entry absent from the page (no alert before a double charge, no next
// step once the lesson is done) is not looked for.
var oneScreen = []struct{ sel, what string }{
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
	{`[data-testid="sequence-diagram"]`, "the diagram of the latest operation"},
}

// offScreen lists, as "what: rect", each present element of oneScreen that
// is not wholly inside the window, and the page's sideways scroll if any.
func (l *labTab) offScreen() []string {
	l.t.Helper()
	var sels, whats []string
	for _, e := range oneScreen {
		sels = append(sels, e.sel)
		whats = append(whats, e.what)
	}
	return eval[[]string](l, fmt.Sprintf(`(() => {
		const sels = %s, whats = %s, out = [];
		sels.forEach((s, i) => {
			const el = document.querySelector(s);
			if (!el) return;
			const r = el.getBoundingClientRect();
			if (r.width === 0 || r.height === 0 || !el.checkVisibility())
				out.push(whats[i] + ": hidden");
			else if (r.top < 0 || r.left < 0 || r.bottom > innerHeight + 0.5 || r.right > innerWidth + 0.5)
				out.push(whats[i] + ": " + [r.left, r.top, r.right, r.bottom].map(Math.round).join(",") + " in " + innerWidth + "×" + innerHeight);
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
	})()`, jsList(sels), jsList(whats)))
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
// and the diagram. Each state is a screenshot.
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
				for _, size := range sizes {
					w, h := size[0], size[1]
					at := fmt.Sprintf("lesson %d, %s, %d×%d", lesson, lang, w, h)
					l.do(chromedp.EmulateViewport(w, h))
					l.navigate(l.url + "?lang=" + lang)
					l.do(chromedp.Click(tid("lesson-setup")))
					l.waitJS(`document.querySelector("#lesson-state")?.dataset.ready === "yes" && document.querySelector("#lesson-state").dataset.next === "0"`, at+": the lesson set up")
					steps := eval[int](l, `+document.querySelector("#lesson-state").dataset.steps`)
					for n := 0; ; n++ {
						for _, miss := range l.offScreen() {
							t.Errorf("%s, before step %d: %s", at, n+1, miss)
						}
						if n == steps {
							break
						}
						l.do(chromedp.Click(tid("lesson-step")))
						l.waitJS(fmt.Sprintf(`document.querySelector("#lesson-state").dataset.next === "%d" && !document.querySelector("form.htmx-request")`, n+1), fmt.Sprintf("%s: step %d", at, n+1))
						if n == 0 {
							l.shoot(dir, fmt.Sprintf("one-screen-lesson-%d-%s-%dx%d-step-1.png", lesson, lang, w, h))
						}
					}
					l.waitJS(`document.querySelector('[data-testid="lesson-outcome"]')?.dataset.state === "met"`, at+": the article's outcome")
					for _, miss := range l.offScreen() {
						t.Errorf("%s, at the end: %s", at, miss)
					}
					l.shoot(dir, fmt.Sprintf("one-screen-lesson-%d-%s-%dx%d-end.png", lesson, lang, w, h))
					if w == 1440 {
						l.axe(src, at)
					}
				}
			}
		})
	}
}
