package web_test

import (
	"fmt"
	"math"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// A box that scrolls on one screen fades out at its foot while more of it
// lies below, and at its head once scrolled (panels.css): the double-charge
// alert's list at 1280×720 does not fade while it fits, fades its foot by
// 1.5 rem when its orders outgrow it, and once scrolled to its end fades
// its head, not its foot. The dock fades less, clear of its newest row.
func TestBrowserScrolledBoxSaysThereIsMore(t *testing.T) {
	t.Parallel()
	l := openLab(t, `{"protection":"none"}`)
	l.do(chromedp.EmulateViewport(1280, 720))
	l.navigate(l.url)
	charged := 0
	twice := func(orders ...int) {
		t.Helper()
		for _, n := range orders {
			for range 2 {
				l.s.must(http.StatusCreated, "POST", l.prefix+"/charges", fmt.Sprintf(`{"order_id":"order-%d","amount":100}`, n))
				charged++
			}
		}
		l.waitText("total-count", fmt.Sprint(charged))
	}
	const list = `document.querySelector('[data-testid="double-charge-alert"] ul')`
	fadeOf := func(side string) float64 { // in rem
		t.Helper()
		return eval[float64](l, `(parseFloat(getComputedStyle(`+list+`).getPropertyValue("`+side+`")) || 0) / parseFloat(getComputedStyle(document.documentElement).fontSize)`)
	}
	overflows := func() bool { return eval[bool](l, list+`.scrollHeight > `+list+`.clientHeight`) }

	twice(1)
	if overflows() {
		t.Fatal("one order charged twice overflows the alert's list")
	}
	if f, g := fadeOf("--more"), fadeOf("--less"); f != 0 || g != 0 {
		t.Errorf("the alert's list fades by %.2f rem at its foot and %.2f at its head with nothing hidden; want 0", f, g)
	}
	twice(2, 3, 4, 5, 6)
	if !overflows() {
		t.Fatal("six orders charged twice fit the alert's list at 1280×720: nothing to fade")
	}
	if f, g := fadeOf("--more"), fadeOf("--less"); math.Abs(f-1.5) > 0.01 || g != 0 {
		t.Errorf("the alert's list, with more below, fades by %.2f rem at its foot and %.2f at its head; want 1.5 and 0", f, g)
	}
	eval[bool](l, `(`+list+`.scrollTop = `+list+`.scrollHeight, new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => ok(true)))))`)
	if f, g := fadeOf("--more"), fadeOf("--less"); f != 0 || math.Abs(g-1.5) > 0.01 {
		t.Errorf("the alert's list, scrolled to its end, fades by %.2f rem at its foot and %.2f at its head; want 0 and 1.5", f, g)
	}

	// the dock, a row or two high here, fades its foot by three fifths as
	// much (a quarter of it at most), clear of the newest payment's row
	dock := eval[[]float64](l, `(() => {
		const b = document.querySelector(".dock-body"), a = b.getBoundingClientRect();
		const r = b.querySelector("#dock-payments tbody tr:first-child").getBoundingClientRect();
		const more = parseFloat(getComputedStyle(b).getPropertyValue("--more")) || 0;
		return [more, Math.min(a.height / 4, more * .6), a.bottom - r.bottom];
	})()`)
	if more, fade, below := dock[0], dock[1], dock[2]; more == 0 || below < fade {
		t.Errorf("the dock, %d payments in it: --more %.1f px, a fade of %.1f px, %.1f px under the newest row; want a fade, clear of it", charged, more, fade, below)
	}
}
