package web_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A drawing too tall for its box on one screen (lesson 3's three attempts
// at 1280×720) scrolls there: the newest attempt is brought into view; a
// box that shrinks with no update brings it into view again; a reader who
// scrolls keeps their place through the page's other updates;
// a new attempt brings the newest into view again (static/diagram.js).
func TestBrowserDiagramScrollsToTheNewest(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	l.s.must(http.StatusOK, "POST", l.prefix+"/lesson", `{"lesson":3}`)
	l.do(chromedp.EmulateViewport(1280, 720))
	l.navigate(l.url)
	l.stepThrough(40 * time.Second)
	// the page's drawing catches up with the lab's: the mark of a page
	// fetched now (the steps' answers came before the stream's last
	// drawing, and what the server records of an attempt may come after
	// its answer, so a page fetched once may be the one behind)
	caughtUp := func() (bool, string) {
		fig := getPage(t, l.s.client, l.url, "").Find("#sequence-diagram")
		op, h := fig.AttrOr("data-op", "?"), fig.AttrOr("data-h", "?")
		return l.poll(fmt.Sprintf(`document.querySelector("#sequence-diagram")?.dataset.op === %q && document.querySelector("#sequence-diagram").dataset.h === %q`, op, h),
			250*time.Millisecond), "op=" + op + " h=" + h
	}
	for tries := 0; ; tries++ {
		ok, want := caughtUp()
		if ok {
			break
		}
		if tries == 40 {
			t.Fatalf("the page's drawing never caught up with the lab's (%s)\n%s", want, l.state())
		}
	}
	const box = `document.querySelector("#sequence-diagram .diagram-draw")`
	// the newest attempt's heading lies inside the box, under the lane heads
	newestInView := fmt.Sprintf(`(() => {
		const b = %s, rows = b.querySelectorAll("[data-testid=attempt]"), h = rows[rows.length - 1].querySelector(".sd-heading").getBoundingClientRect();
		const a = b.getBoundingClientRect(), heads = b.querySelector(".diagram-heads").getBoundingClientRect();
		return b.scrollHeight > b.clientHeight && h.top >= heads.bottom - 1 && h.bottom <= a.bottom + 1;
	})()`, box)
	attempts := `document.querySelectorAll("#sequence-diagram [data-testid=attempt]").length`
	l.waitJS(newestInView, "the newest attempt in view")
	n := eval[int](l, attempts)

	// the box shrinks with no update (a panel beside it grew), scrolled to
	// its top so that the newest heading is out of view: it comes back
	if hidden := eval[bool](l, fmt.Sprintf(`(() => {
		const b = %s; b.scrollTop = 0; b.style.maxHeight = Math.round(b.clientHeight * 0.7) + "px";
		return !%s;
	})()`, box, newestInView)); !hidden {
		t.Fatal("the newest heading is in view with the box at its top: the drawing is too short for this test")
	}
	l.waitJS(newestInView, "the newest attempt in view in the shrunk box")
	eval[bool](l, `(`+box+`.style.maxHeight = "", true)`)
	l.waitJS(newestInView, "the newest attempt in view in the box grown back")

	// the reader scrolls up; the page's other updates keep their place, and
	// so does the drawing drawn anew by a live update
	frames := `new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => ok(true))))`
	eval[bool](l, box+`.dispatchEvent(new WheelEvent("wheel", {bubbles: true, deltaY: -500})) || true`)
	eval[bool](l, `(`+box+`.scrollTop = 40, true)`)
	eval[bool](l, frames) // the scroll event
	place := func(when string) {
		t.Helper()
		if top := eval[float64](l, box+`.scrollTop`); top != 40 {
			t.Errorf("%s: the reader's place was lost: scrolled to %v, not 40", when, top)
		}
	}
	eval[bool](l, `document.dispatchEvent(new CustomEvent("htmx:after:swap")) || true`)
	place("after an update of the page")
	eval[bool](l, `(() => { const r = document.getElementById("diagram-region"); r.innerHTML = r.innerHTML;
		document.dispatchEvent(new CustomEvent("htmx:after:swap")); return true; })()`)
	place("after the drawing was drawn anew")

	// a new attempt: the newest comes into view again
	l.do(chromedp.Click(tid("retry")))
	l.waitJS(fmt.Sprintf(`%s > %d`, attempts, n), "the retry drawn")
	l.waitJS(newestInView, "the new attempt in view")
}
