package web_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// screenshotDir is $IDEMLAB_SCREENSHOTS, where the browser tests write
// what they saw as PNGs; "" (no screenshots) when it is not set.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("IDEMLAB_SCREENSHOTS")
	if dir == "" {
		return "" // no screenshots: each costs the browser a full-page PNG
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshots: %v", err)
	}
	return dir
}

// shoot waits until the page is still (fonts loaded, finite animations
// done, two frames drawn) and writes a PNG of the whole page.
func (l *labTab) shoot(dir, name string) {
	l.t.Helper()
	if dir == "" {
		return
	}
	l.do(chromedp.Evaluate[chromedp.Void](`(async () => {
		await document.fonts.ready;
		const finite = document.getAnimations().filter(a => isFinite(a.effect?.getComputedTiming().endTime ?? Infinity));
		await Promise.race([Promise.all(finite.map(a => a.finished.catch(() => {}))), new Promise(r => setTimeout(r, 2000))]);
		await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
	})()`, chromedp.EvalAwaitPromise))
	// A page that fits its window is shot as it is: a whole-page shot lays
	// it out again at the page's full size, which loses what its boxes
	// were scrolled to.
	shot := chromedp.FullScreenshot(100)
	if eval[bool](l, `document.documentElement.scrollHeight <= innerHeight`) {
		shot = chromedp.CaptureScreenshot()
	}
	png, err := chromedp.Run(l.ctx, shot)
	if err != nil {
		l.t.Fatalf("screenshot %s: %v", name, err)
	}
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, png, 0o644); err != nil {
		l.t.Fatalf("screenshot %s: %v", name, err)
	}
	l.t.Logf("wrote %s", file)
}

func (l *labTab) colorScheme(scheme string) {
	l.t.Helper()
	var features []*emulation.MediaFeature
	if scheme != "" {
		features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}
	}
	if _, err := chromedp.Call(l.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features}); err != nil {
		l.t.Fatalf("emulate prefers-color-scheme %q: %v", scheme, err)
	}
}

func TestBrowserScreenshots(t *testing.T) {
	t.Parallel()
	dir := screenshotDir(t)
	t.Logf("screenshots in %s", dir)
	desktop := chromedp.EmulateViewport(1440, 900)

	t.Run("empty", func(t *testing.T) {
		t.Parallel()
		l := openLab(t, "")
		l.do(desktop)
		l.navigate(l.url)
		l.shoot(dir, "01-empty-1440x900.png")
	})
	t.Run("double-charge", func(t *testing.T) {
		t.Parallel()
		l := openLab(t, lesson1Settings)
		l.do(desktop)
		l.doubleCharge()
		l.shoot(dir, "02-double-charge-1440x900.png")

		l.colorScheme("dark")
		if !eval[bool](l, `matchMedia("(prefers-color-scheme: dark)").matches`) {
			t.Errorf("dark mode emulation did not take")
		}
		l.shoot(dir, "05-double-charge-dark-1440x900.png")
		l.colorScheme("")

		l.do(chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
		l.shoot(dir, "04-double-charge-phone-375x812.png")
		if w := eval[int](l, `document.documentElement.scrollWidth`); w > 375 {
			t.Errorf("at 375 px wide the page scrolls sideways: %d px wide", w)
		}

		l.do(desktop)
		l.navigate(l.url + "?type=large")
		l.waitText("total-count", "2")
		l.shoot(dir, "06-double-charge-large-type-1440x900.png")
		if !eval[bool](l, `document.body.classList.contains("large") || document.documentElement.classList.contains("large")`) {
			t.Errorf("?type=large did not switch the page to large type (no class \"large\" on body or html)")
		}
	})
	t.Run("replay", func(t *testing.T) {
		t.Parallel()
		l := openLab(t, `{"protection":"replay","key_strategy":"uuid","network":"response-lost"}`)
		l.do(desktop)
		l.fireThenRetry()
		if got := l.text("total-count"); got != "1" {
			t.Errorf("replay: total-count = %q, want 1", got)
		}
		l.shoot(dir, "03-replay-after-retry-1440x900.png")
	})
}
