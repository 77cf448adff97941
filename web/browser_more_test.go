package web_test

import (
	"fmt"
	"math"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// A box that scrolls on one screen fades out at its foot while more of it
// lies below (panels.css): the double-charge alert's list at 1280×720 does
// not fade while it fits, fades by 1.5 rem when its orders outgrow it, and
// fades no more once scrolled to its end.
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
	fade := func() float64 { // in rem
		t.Helper()
		return eval[float64](l, `(parseFloat(getComputedStyle(`+list+`).getPropertyValue("--more")) || 0) / parseFloat(getComputedStyle(document.documentElement).fontSize)`)
	}
	overflows := func() bool { return eval[bool](l, list+`.scrollHeight > `+list+`.clientHeight`) }

	twice(1)
	if overflows() {
		t.Fatal("one order charged twice overflows the alert's list")
	}
	if f := fade(); f != 0 {
		t.Errorf("the alert's list fades by %.2f rem with nothing hidden; want 0", f)
	}
	twice(2, 3, 4, 5, 6)
	if !overflows() {
		t.Fatal("six orders charged twice fit the alert's list at 1280×720: nothing to fade")
	}
	if f := fade(); math.Abs(f-1.5) > 0.01 {
		t.Errorf("the alert's list, with more below, fades by %.2f rem; want 1.5", f)
	}
	eval[bool](l, `(`+list+`.scrollTop = `+list+`.scrollHeight, new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => ok(true)))))`)
	if f := fade(); f != 0 {
		t.Errorf("the alert's list, scrolled to its end, fades by %.2f rem; want 0", f)
	}
}
