package web_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"idemlab/web"
)

// A real browser that meets an error sees a page, not JSON: in English and
// Russian, at a phone's width and a desktop's, with nothing running off the
// side; and the page's own "new lab" button, pressed too often, gets the
// 429 page. Screenshots go to screenshotDir.
func TestBrowserErrorPages(t *testing.T) {
	t.Parallel()
	b := browser(t)
	s := startServerWith(t, web.Options{LabRate: web.Rate{Every: time.Hour, Burst: 1}})
	dir := screenshotDir(t)
	tab, ctx := newTab(t, b, chromedp.WithNewBrowserContext())
	l := &labTab{t: t, s: s, ctx: ctx, tab: tab}
	open := func(url string) {
		t.Helper()
		l.do(chromedp.Navigate(url))
		l.waitAfterNavigation(`document.querySelector('[data-testid="error-page"]')`, "the error page") // the old page may still be going
	}
	for _, size := range []struct {
		name   string
		w, h   int64
		mobile bool
	}{{"375x812", 375, 812, true}, {"1440x900", 1440, 900, false}} {
		var opts []chromedp.EmulateViewportOption
		if size.mobile {
			opts = append(opts, chromedp.EmulateMobile)
		}
		l.do(chromedp.EmulateViewport(size.w, size.h, opts...))
		for _, tc := range []struct{ lang, h1 string }{{"en", "Not found"}, {"ru", "Не найдено"}} {
			open(s.URL + "/labs/AAAAAAAAAAAAAAAAAAAAAA?lang=" + tc.lang)
			if got := eval[string](l, `document.querySelector("h1").textContent`); got != tc.h1 {
				t.Errorf("%s %s: h1 %q, want %q", tc.lang, size.name, got, tc.h1)
			}
			if w := eval[int64](l, `document.documentElement.scrollWidth`); w > size.w {
				t.Errorf("%s at %s: the page is %d px wide", tc.lang, size.name, w)
			}
			l.shoot(dir, fmt.Sprintf("error-404-%s-%s.png", tc.lang, size.name))
			open(s.URL + "/s/" + longCode + "?lang=" + tc.lang)
			if w := eval[int64](l, `document.documentElement.scrollWidth`); w > size.w {
				t.Errorf("bad scenario link, %s at %s: the page is %d px wide", tc.lang, size.name, w)
			}
			l.shoot(dir, fmt.Sprintf("error-400-scenario-%s-%s.png", tc.lang, size.name))
		}
	}
	// The new-lab button: the first press opens a lab; the second, within
	// the hour, is told to wait.
	l.do(chromedp.EmulateViewport(1440, 900))
	for i, want := range []string{"", "429"} {
		l.do(chromedp.Navigate(s.URL + "/?lang=en"))
		l.waitAfterNavigation(`document.querySelector('[data-testid="new-lab"]')`, "the page") // tolerates the old page going
		l.do(chromedp.Click(tid("new-lab")))
		if want == "" {
			l.waitAfterNavigation(`location.pathname.startsWith("/labs/")`, "the new lab")
			continue
		}
		l.waitAfterNavigation(`document.querySelector('[data-testid="error-page"]')?.dataset.status === "429"`, fmt.Sprintf("the 429 page after press %d", i+1))
		if got := eval[string](l, `document.querySelector('[data-testid="error-retry"]').textContent`); got == "" {
			t.Error("the 429 page does not say when to retry")
		}
		l.shoot(dir, "error-429-en-1440x900.png")
	}
}

// waitAfterNavigation waits (10 s at most) until the expression is truthy
// in the page a click is navigating to: a poll of the page that is being
// left fails, and is tried again.
func (l *labTab) waitAfterNavigation(expr, what string) {
	l.t.Helper()
	if !poll(10*time.Second, func() bool {
		ok, err := chromedp.Run(l.ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && !!(`+expr+`)`))
		return err == nil && ok
	}) {
		l.t.Fatalf("timed out waiting for %s\n%s", what, l.state())
	}
}

// longCode is a scenario code far longer than a page should repeat.
var longCode = func() string {
	b := make([]byte, 3000)
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyz"[i%26]
	}
	return string(b)
}()
