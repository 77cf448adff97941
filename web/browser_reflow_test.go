package web_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// At 320 CSS pixels wide (the narrowest phones, and a laptop's page at 400%
// zoom: WCAG 1.4.10, Reflow), in both languages, the lab's page with a
// class's question open and a payment, each of its dock's panels, a
// phone's page of the class, the comparison page, the storms page and an
// error page never scroll sideways, and no control is cut at the window's
// edge by a box that clips what overflows it; axe finds nothing wrong with
// the comparison and error pages, which no other browser test gives it.
func TestBrowserReflowsAt320(t *testing.T) {
	t.Parallel()
	l := openLab(t, `{"network":"ok","notify":"queue"}`, withParts())
	teacher, code := l.s.classOn(l.prefix)
	l.s.lessonAt(l.prefix, 1, "", 0)
	l.s.must(http.StatusOK, "POST", l.prefix+"/class/questions", "", "Cookie", teacher)
	l.s.must(http.StatusCreated, "POST", l.prefix+"/charges", `{"order_id":"order-42","amount":1500}`)
	l.do(chromedp.EmulateViewport(320, 640, chromedp.EmulateMobile))
	dir, src := screenshotDir(t), axeSource(t)
	look := func(lang, name string) {
		t.Helper()
		l.shoot(dir, "reflow-320-"+lang+"-"+name+".png")
		l.fitsWidth(lang+", "+name, 320, "body")
	}
	for _, lang := range []string{"en", "ru"} {
		l.navigate(l.url + "?lang=" + lang)
		look(lang, "lab")
		tabs := eval[[]string](l, `[...document.querySelectorAll('[role=tab]')].map(t => t.dataset.testid)`)
		if len(tabs) < 7 {
			t.Errorf("%s: the dock's tabs %q, want the panels of a lab with a broker and a mailbox", lang, tabs)
		}
		for _, tab := range tabs {
			l.do(chromedp.Click(tid(tab)))
			l.waitJS(fmt.Sprintf(`%s.getAttribute("aria-selected") === "true"`, jsTid(tab)), lang+": "+tab)
			look(lang, tab)
		}
		for name, page := range map[string]string{"join": "/join/" + code, "compare": "/compare", "storms": l.url[len(l.s.URL):] + "/storms", "error": "/no-such-page"} {
			l.do(chromedp.Navigate(l.s.URL + page + "?lang=" + lang))
			l.waitJS(`document.readyState === "complete"`, lang+": "+page)
			look(lang, name)
			if name == "compare" || name == "error" { // the pages no other browser test gives axe
				l.axe(src, lang+", the "+name+" page at 320 px")
			}
		}
	}
}

// fitsWidth fails the test when the page, width px wide, scrolls sideways,
// or a control within scope (a selector) is cut at the window's edge: a
// box that clips what overflows it hides the cut from the page's width.
func (l *labTab) fitsWidth(at string, width int, scope string) {
	l.t.Helper()
	if w := eval[int](l, `document.documentElement.scrollWidth`); w > width {
		l.t.Errorf("%s: at %d px wide the page scrolls sideways: %d px wide", at, width, w)
	}
	if cut := l.pastTheEdge(scope); len(cut) > 0 {
		l.t.Errorf("%s: at %d px wide the controls %q reach past the window's edge", at, width, cut)
	}
}

// pastTheEdge names the controls within scope (a selector) that a box
// clipping what overflows it has cut at the window's right edge.
func (l *labTab) pastTheEdge(scope string) []string {
	l.t.Helper()
	return eval[[]string](l, fmt.Sprintf(`[...document.querySelectorAll(%q)].filter(e => e.checkVisibility() && e.getBoundingClientRect().right > innerWidth + 0.5).map(e => e.textContent.trim() || e.getAttribute("aria-label") || e.name || e.id)`,
		scope+" :is(a, button, input, select, textarea, summary)"))
}
