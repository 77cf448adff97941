package web_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/chromedp/chromedp"
)

// choose sets a select like a person does: focus it, pick the option, and
// the browser's change event goes to htmx. It fails if there is no option.
func (l *labTab) choose(id, value string) {
	l.t.Helper()
	l.do(chromedp.Focus(tid(id)), chromedp.SetValue(tid(id), value))
	if got := eval[string](l, jsTid(id)+".value"); got != value {
		l.t.Fatalf("select %s has no option %q (value is %q)", id, value, got)
	}
	l.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const el = %s;
		el.dispatchEvent(new Event("input", {bubbles: true}));
		el.dispatchEvent(new Event("change", {bubbles: true})); })()`, jsTid(id))))
}

// settings reads the lab's settings over plain HTTP.
func (l *labTab) settings() map[string]any {
	l.t.Helper()
	return l.s.must(http.StatusOK, "GET", l.prefix+"/settings", "").JSON(l.t)
}

// waitSettings waits until the lab's settings (over HTTP) have the values.
func (l *labTab) waitSettings(want map[string]string) {
	l.t.Helper()
	var got map[string]any
	if !poll(10*time.Second, func() bool {
		got = l.settings()
		for k, v := range want {
			if fmt.Sprint(got[k]) != v {
				return false
			}
		}
		return true
	}) {
		l.t.Fatalf("lab settings: got %v, want %v\n%s", got, want, l.state())
	}
}

// setSettings changes selects of the page, each as a person would, waiting
// for the server to take each change.
func (l *labTab) setSettings(pairs ...string) {
	l.t.Helper()
	names := map[string]string{"protection": "protection", "key-strategy": "key_strategy", "network": "network"}
	for i := 0; i+1 < len(pairs); i += 2 {
		l.choose(pairs[i], pairs[i+1])
		l.waitSettings(map[string]string{names[pairs[i]]: pairs[i+1]})
	}
}

// fireThenRetry fires a charge with the lab's current network (the lessons
// set response-lost), waits until the server has committed it and Retry is
// offered, sets the network to ok and retries once.
func (l *labTab) fireThenRetry() {
	l.t.Helper()
	l.do(chromedp.Click(tid("fire-charge")))
	l.waitText("total-count", "1")
	l.do(chromedp.WaitEnabled(tid("retry")))
	l.setSettings("network", "ok")
	l.do(chromedp.Click(tid("retry")))
	l.waitJS(`document.querySelectorAll('[data-testid="attempt"]').length >= 2`, "the retry's attempt in the sequence diagram")
}

// doubleCharge reproduces lesson 1 on a lab created with protection none,
// key none and network response-lost.
func (l *labTab) doubleCharge() {
	l.t.Helper()
	l.fireThenRetry()
	l.waitText("total-count", "2")
	l.do(chromedp.WaitVisible(tid("double-charge-alert")))
}

const lesson1Settings = `{"protection":"none","key_strategy":"none","network":"response-lost"}`
