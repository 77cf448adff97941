package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Lessons 11 and 12 by hand, in both languages, at a projector's smallest
// size: the keys panel lists the Redis key with its time left counting
// down; the clock button expires it and the retry charges again; the
// server's fault leaves the key and no payment, and the retry's "duplicate"
// raises the lost-charge alert. Everything stays on one screen; each end is
// a screenshot.
func TestBrowserKeysAndTheLostCharge(t *testing.T) {
	t.Parallel()
	dir := screenshotDir(t)
	for _, lang := range []string{"en", "ru"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			words := map[string]map[string]string{
				"en": {"lost": "never charged", "redis": "Redis", "expired": "expired"},
				"ru": {"lost": "не списали", "redis": "Redis", "expired": "истёк"},
			}[lang]

			// Lesson 11: the key's TTL runs out before the retry.
			l := openLab(t, `{"protection":"set-nx","key_strategy":"uuid","key_ttl_s":60,"network":"response-lost"}`, withParts())
			l.do(chromedp.EmulateViewport(1280, 720))
			l.navigate(l.url + "?lang=" + lang)
			l.do(chromedp.Click(tid("fire-charge")))
			l.waitText("total-count", "1")
			l.waitJS(`document.querySelectorAll('[data-testid="key-row"][data-store="redis"][data-state="set"]').length === 1`, "the Redis key in the keys panel")
			row := `document.querySelector('[data-testid="key-row"]')`
			if got := eval[string](l, row+`.textContent`); !strings.Contains(got, words["redis"]) {
				t.Errorf("the key's row says %q; want it to name %s", got, words["redis"])
			}
			first := eval[string](l, row+`.querySelector('[data-testid="key-ttl"]').textContent.trim()`)
			if !l.poll(fmt.Sprintf(`%s.querySelector('[data-testid="key-ttl"]').textContent.trim() !== %q`, row, first), 3*time.Second) {
				t.Errorf("the key's time left stays %q: it does not count down", first)
			}
			if off := l.offScreen(); len(off) > 0 {
				t.Errorf("%s, 1280×720, lesson 11 before the clock: %s", lang, strings.Join(off, "; "))
			}
			l.shoot(dir, fmt.Sprintf("keys-ttl-%s-1280x720.png", lang))
			l.choose("advance-by", "120")
			l.do(chromedp.Click(tid("advance-clock")))
			l.waitJS(`document.querySelector('[data-testid="key-row"]')?.dataset.state === "expired"`, "the key to expire on the lab's clock")
			if got := l.text("key-state"); !strings.Contains(got, words["expired"]) {
				t.Errorf("the expired key's state says %q; want %q", got, words["expired"])
			}
			l.setSettings("network", "ok")
			l.do(chromedp.Click(tid("retry")))
			l.waitText("total-count", "2")
			l.waitJS(jsTid("double-charge-alert"), "the double-charge alert")
			l.shoot(dir, fmt.Sprintf("lesson-11-by-hand-%s-1280x720.png", lang))

			// Lesson 12: the guard outlives the charge.
			l = openLab(t, `{"protection":"set-nx","key_strategy":"uuid"}`, withParts())
			l.do(chromedp.EmulateViewport(1280, 720))
			l.navigate(l.url + "?lang=" + lang)
			l.choose("server-fault", "crash-after-guard")
			l.waitSettings(map[string]string{"server_fault": "crash-after-guard"})
			l.do(chromedp.Click(tid("fire-charge")))
			l.waitJS(`document.querySelectorAll('[data-testid="key-row"][data-store="redis"]').length === 1 && !document.querySelector('[data-testid="retry"]').disabled`, "the key taken and the crashed charge done")
			if n := l.text("total-count"); n != "0" {
				t.Errorf("after the crash: %s charges; want 0", n)
			}
			l.choose("server-fault", "none")
			l.waitSettings(map[string]string{"server_fault": "none"})
			l.do(chromedp.Click(tid("retry")))
			l.waitJS(jsTid("lost-charge-alert"), "the lost-charge alert")
			if got := l.text("lost-charge-alert"); !strings.Contains(got, words["lost"]) || !strings.Contains(got, "order-42") {
				t.Errorf("the lost-charge alert says %q; want %q and the order", got, words["lost"])
			}
			if n := l.text("total-count"); n != "0" {
				t.Errorf("after the retry: %s charges; want 0", n)
			}
			if off := l.offScreen(); len(off) > 0 {
				t.Errorf("%s, 1280×720, lesson 12's end: %s", lang, strings.Join(off, "; "))
			}
			l.shoot(dir, fmt.Sprintf("lesson-12-by-hand-%s-1280x720.png", lang))
			l.do(chromedp.EmulateViewport(1440, 900))
			l.shoot(dir, fmt.Sprintf("lesson-12-by-hand-%s-1440x900.png", lang))
		})
	}
}
