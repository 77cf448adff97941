package web_test

import (
	"context"
	"fmt"
	"idemlab/sim/lesson"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// nearButton is JavaScript that tells whether the notice with the id is
// shown, holds text, and stands within 160 px below or beside the button
// with the hook: where the eye is after the click.
func nearButton(notice, button string) string {
	return fmt.Sprintf(`(() => {
		const n = document.getElementById(%q), b = %s;
		if (!n || !b || !n.textContent.trim() || n.offsetParent === null) return false;
		const nr = n.getBoundingClientRect(), br = b.getBoundingClientRect();
		return nr.top - br.bottom < 160 && br.top - nr.bottom < 160;
	})()`, notice, jsTid(button))
}

// A refused input is explained beside the control that caused it, in the
// page's language, and announced (role=alert); nothing is charged. With a
// lesson open, at a projector's size, the explanation is in the window.
func TestBrowserRefusalBesideTheButton(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	l.s.must(http.StatusOK, "POST", l.prefix+"/lesson", `{"lesson":1}`)
	l.do(chromedp.EmulateViewport(1440, 900))
	for _, lang := range []struct{ code, id, says string }{{"ru", "заказ 42", "не принят"}, {"en", "order 42", "was refused"}} {
		l.navigate(l.url + "?lang=" + lang.code)
		l.do(chromedp.SetValue(tid("order-id"), lang.id), chromedp.Click(tid("fire-charge")))
		l.waitJS(nearButton("charge-notice", "fire-charge"), lang.code+": the refusal beside the Charge button")
		if got := eval[string](l, `document.getElementById("charge-notice").textContent`); !contains(got, lang.id, lang.says) {
			t.Errorf("%s: the notice says %q, want the refused id and %q", lang.code, got, lang.says)
		}
		if role := eval[string](l, `document.getElementById("charge-notice").getAttribute("role")`); role != "alert" {
			t.Errorf("%s: the notice's role is %q, want alert (announced)", lang.code, role)
		}
		if !eval[bool](l, `(() => { const r = document.getElementById("charge-notice").getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`) {
			t.Errorf("%s: the notice is outside the window", lang.code)
		}
		l.shoot(screenshotDir(t), "refusal-beside-the-button-"+lang.code+"-1440x900.png")
		// at the smallest projector size the notice takes room, and the
		// story stays on one screen
		l.do(chromedp.EmulateViewport(1280, 720))
		for _, miss := range l.offScreen() {
			t.Errorf("%s, 1280×720, with the notice: %s", lang.code, miss)
		}
		l.shoot(screenshotDir(t), "refusal-beside-the-button-"+lang.code+"-1280x720.png")
		l.do(chromedp.EmulateViewport(1440, 900))
		if led := l.s.ledger(l.prefix); led.Count != 0 {
			t.Errorf("%s: %d charges after a refused one", lang.code, led.Count)
		}
	}
	// A right charge then clears it.
	l.do(chromedp.SetValue(tid("order-id"), "order-42"), chromedp.Click(tid("fire-charge")))
	l.waitText("total-count", "1")
	l.waitJS(`!document.getElementById("charge-notice").textContent.trim()`, "the notice cleared by a charge that went through")
}

// A click while the server is unreachable says so at the button, in the
// page's language: it is not silently lost.
func TestBrowserServerDownAtTheButton(t *testing.T) {
	t.Parallel()
	for _, lang := range []struct{ code, says, addr string }{{"en", "did not answer", "127.0.0.40:0"}, {"ru", "не ответила", "127.0.0.41:0"}} {
		t.Run(lang.code, func(t *testing.T) {
			t.Parallel()
			// on a loopback address of its own: the port it lets go must stay
			// closed, not become another test's server
			l := openLab(t, "", withAddr(lang.addr))
			l.s.must(http.StatusOK, "POST", l.prefix+"/lesson", `{"lesson":1}`)
			l.do(chromedp.EmulateViewport(1440, 900))
			l.navigate(l.url + "?lang=" + lang.code)
			l.s.Stop()
			l.waitJS(`document.getElementById("live-status").dataset.state !== "live"`, "the page to see the stream gone")
			l.do(chromedp.Click(tid("fire-charge")))
			// (a busy machine's browser may take its time to give up on the
			// closed port)
			if !l.poll(nearButton("charge-notice", "fire-charge"), 30*time.Second) {
				t.Fatalf("timed out waiting for the offline notice beside the Charge button\n%s", l.state())
			}
			if got := eval[string](l, `document.getElementById("charge-notice").textContent`); !contains(got, lang.says) {
				t.Errorf("the notice says %q, want %q", got, lang.says)
			}
			if got := eval[string](l, `document.getElementById("live-status").dataset.state`); got != "down" {
				t.Errorf("after a click the server never got, the live status is %q, want down", got)
			}
			l.shoot(screenshotDir(t), "server-down-at-the-button-"+lang.code+"-1440x900.png")
		})
	}
}

// Long actions say how they go: a race says its attempts are on their way
// until they have all come back; Compare says it is running on its button;
// Play is announced. Reloading a comparison's page runs nothing again.
func TestBrowserLongActionsShowProgress(t *testing.T) {
	t.Parallel()
	l := openLab(t, `{"network":"ok","server_delay_ms":1500}`)
	l.do(chromedp.EmulateViewport(1440, 900))
	l.navigate(l.url + "?lang=ru")
	l.do(chromedp.Click(tid("fire-charge")))
	l.waitText("total-count", "1")
	l.do(chromedp.SetValue(tid("race-count"), "3"), chromedp.Click(tid("race")))
	l.waitJS(`/3 попытки в пути одновременно/.test(document.getElementById("retry-progress").textContent)`, "the race's progress")
	if !eval[bool](l, `(() => { const r = document.getElementById("retry-progress").getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; })()`) {
		t.Errorf("the race's progress is not in the window")
	}
	l.shoot(screenshotDir(t), "race-progress-ru-1440x900.png")
	l.waitJS(`document.getElementById("retry-progress").textContent.trim() === ""`, "the progress to clear when the race is over")

	// Play is announced while it plays.
	l.s.must(http.StatusOK, "POST", l.prefix+"/lesson", `{"lesson":2}`)
	l.navigate(l.url)
	l.choose("lesson-speed", "3000")
	l.do(chromedp.Click(tid("lesson-play")))
	l.waitJS(jsTid("lesson-playing")+`.textContent.trim() !== "" && document.querySelector('[data-testid="lesson-player"]').classList.contains("playing")`, "Play to say it plays")
	l.do(chromedp.Click(tid("lesson-pause")))
	l.waitJS(jsTid("lesson-playing")+`.textContent.trim() === ""`, "Pause to end the announcement")

	// Compare says it runs, then lands on a page of its own; a reload runs
	// nothing. (Its labs are gone once read: the runs are counted.)
	runs := func() (n int) {
		l.s.Store.QueryRow(context.Background(), `SELECT COUNT(*) FROM comparisons`).Scan(&n)
		return n
	}
	before := runs()
	// What the button says as the form goes is kept across the navigation
	// (the page may be gone by the time the click returns).
	l.do(chromedp.Evaluate[chromedp.Void](`document.addEventListener("submit", () => { const b = ` + jsTid("compare") + `;
		sessionStorage.setItem("compare-busy", b.textContent.trim() + " " + b.getAttribute("aria-busy")); })`))
	l.do(chromedp.Click(tid("compare")))
	l.do(chromedp.WaitVisible(tid("compare-grid")))
	if path := eval[string](l, `location.pathname`); !strings.HasPrefix(path, "/compare/") {
		t.Fatalf("Compare landed on %s, want /compare/{id}", path)
	}
	ran := runs()
	if ran != before+1 {
		t.Fatalf("comparisons %d → %d: the button ran none", before, ran)
	}
	if got := eval[string](l, `sessionStorage.getItem("compare-busy") ?? ""`); got != "Сравниваю: 30 + 9 лабораторий… true" {
		t.Errorf("while it runs the Compare button says %q, want that it compares, busy", got)
	}
	grid := eval[string](l, `document.querySelector('[data-testid="compare-grid"]').textContent`)
	l.shoot(screenshotDir(t), "compare-ru-1440x900.png")
	l.do(chromedp.Reload(), chromedp.WaitVisible(tid("compare-grid")))
	if again := eval[string](l, `document.querySelector('[data-testid="compare-grid"]').textContent`); again != grid {
		t.Errorf("the reloaded comparison shows another grid")
	}
	if got := runs(); got != ran {
		t.Errorf("comparisons %d → %d: reloading the comparison ran it again", ran, got)
	}
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// The lab-wide actions are in a tool bar at the top of the page, on the
// first screen: New private lab (README's first step), Reset, Compare, and
// Share and take home, which opens from the keyboard onto the link, the
// address and the exports.
func TestBrowserToolbarOnTheFirstScreen(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	l.navigate(l.url + "?lang=ru") // the longer words
	for _, id := range []string{"new-lab", "reset", "compare", "share"} {
		if !eval[bool](l, fmt.Sprintf(`(() => { const r = %s.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight && r.height > 0; })()`, jsTid(id))) {
			t.Errorf("%s is not on the first screen", id)
		}
	}
	if eval[bool](l, jsTid("export-csv")+".checkVisibility()") {
		t.Error("the exports show before Share and take home is opened")
	}
	l.do(chromedp.Focus(tid("share")), chromedp.KeyEvent("\r"))
	l.waitJS(jsTid("export-csv")+".checkVisibility() && "+jsTid("scenario-link")+".checkVisibility()", "the exports and the scenario link, opened from the keyboard")
	if w := eval[int](l, `document.documentElement.scrollWidth - innerWidth`); w > 0 {
		t.Errorf("opened, Share and take home makes the page %d px wider than the window", w)
	}
}

// In large type, with a lesson open, the lessons' numbers stand in even
// rows: the article's first half (1–6) on one row (they wrapped 4 + 2),
// past the ledger (7, 8) under 1 and 2, in both languages.
func TestBrowserLessonNumbersOnOneRow(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	l.s.must(http.StatusOK, "POST", l.prefix+"/lesson", `{"lesson":3}`)
	for _, lang := range []string{"en", "ru"} {
		l.navigate(l.url + "?type=large&lang=" + lang)
		boxes := eval[[][2]float64](l, `[...document.querySelectorAll('[data-testid="lesson-choose"]')].map(b => { const r = b.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.top)]; })`)
		if len(boxes) != len(lesson.All()) {
			t.Fatalf("%s: %d lesson buttons, want %d", lang, len(boxes), len(lesson.All()))
		}
		for i, b := range boxes {
			row, col := i/6, i%6
			if b[1] != boxes[row*6][1] {
				t.Errorf("%s, large type: lesson %d is not on the row of lesson %d: %v", lang, i+1, row*6+1, boxes)
			}
			if row > 0 && (b[0] != boxes[col][0] || b[1] <= boxes[0][1]) {
				t.Errorf("%s, large type: lesson %d does not stand under lesson %d: %v", lang, i+1, col+1, boxes)
			}
		}
	}
	l.navigate(l.url + "?type=normal")
}
