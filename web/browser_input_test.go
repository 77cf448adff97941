package web_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

func TestBrowserXSSOrderID(t *testing.T) {
	t.Parallel()
	const payload = `<img src=x onerror=alert(1)>`
	l := openLab(t, `{"network":"ok"}`)

	// Record (and dismiss) every JavaScript dialog the page opens.
	var (
		mu      sync.Mutex
		dialogs []string
	)
	dctx, stop := context.WithCancel(l.ctx)
	done := make(chan struct{})
	events := chromedp.Events(dctx, cdppage.JavascriptDialogOpening)
	go func() {
		defer close(done)
		for ev, err := range events {
			if err != nil {
				return
			}
			mu.Lock()
			dialogs = append(dialogs, string(ev.Type)+": "+ev.Message)
			mu.Unlock()
			chromedp.Call(dctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	defer func() { stop(); <-done }()

	l.do(
		chromedp.Clear(tid("order-id")),
		chromedp.SendKeys(tid("order-id"), payload),
		chromedp.Click(tid("fire-charge")),
	)
	if got := eval[string](l, jsTid("order-id")+".value"); got != payload {
		t.Errorf("order-id holds %q after typing, want %q", got, payload)
	}
	// The server refuses the order id and says so, the typed text escaped.
	if !l.poll(fmt.Sprintf(`(document.querySelector("#charge-notice")?.textContent ?? "").includes(%q)`, payload), 5*time.Second) {
		why := eval[string](l, `(() => { const el = `+jsTid("order-id")+`;
			return "order-id validity: valid=" + el.validity.valid + " patternMismatch=" + el.validity.patternMismatch +
				" validationMessage=" + JSON.stringify(el.validationMessage); })()`)
		t.Errorf("the typed order id did not appear as text in #charge-notice within 5 s (%s)\n%s", why, l.state())
	} else if html := eval[string](l, `document.querySelector("#charge-notice").innerHTML`); strings.Contains(html, "<img") {
		t.Errorf("#charge-notice holds markup from the order id: %s", html)
	}
	if n := eval[int](l, `document.querySelectorAll("img").length`); n != 0 {
		t.Errorf("%d img elements in the page, want none: %s", n, eval[string](l, `[...document.querySelectorAll("img")].map(e => e.outerHTML).join(" ")`))
	}
	if led := l.s.ledger(l.prefix); led.Count != 0 {
		t.Errorf("ledger over HTTP: %d charges, want 0", led.Count)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialogs) > 0 {
		t.Errorf("JavaScript dialogs opened: %q", dialogs)
	}
}

func TestBrowserKeyboardSettings(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	active := func() string {
		return eval[string](l, `document.activeElement?.getAttribute("data-testid") ?? ""`)
	}
	// Tab from the start of the page to the protection select.
	presses := 0
	for ; active() != "protection"; presses++ {
		if presses == 60 {
			t.Fatalf("60 Tab presses from the page start did not reach the protection select (at %q)", active())
		}
		l.do(chromedp.KeyEvent(kb.Tab))
	}
	t.Logf("protection reached with %d Tab presses", presses)
	focus := eval[string](l, `(() => { const s = getComputedStyle(document.activeElement);
		return s.outlineStyle + " " + s.outlineWidth + " " + s.outlineColor; })()`)
	if strings.HasPrefix(focus, "none") || strings.Contains(focus, " 0px ") {
		t.Errorf("focused protection select has no visible outline: %s", focus)
	} else {
		t.Logf("focus outline: %s", focus)
	}
	// Keys only: arrows pick the option, Shift+Tab goes back to the key select.
	arrowTo := func(id, want string) {
		for i := 0; eval[string](l, jsTid(id)+".value") != want; i++ {
			if i == 10 {
				t.Fatalf("ArrowDown on %s did not reach %q (value %q)", id, want, eval[string](l, jsTid(id)+".value"))
			}
			l.do(chromedp.KeyEvent(kb.ArrowDown))
		}
	}
	arrowTo("protection", "replay")
	for i := 0; active() != "key-strategy"; i++ {
		if i == 10 {
			t.Fatalf("Shift+Tab did not reach the key-strategy select (at %q)", active())
		}
		l.do(chromedp.KeyEvent(kb.Tab, chromedp.KeyModifiers(chromedp.ModifierShift)))
	}
	arrowTo("key-strategy", "uuid")
	// Every change a key made must reach the lab, the last one included, and
	// the page must go on showing what the lab has.
	var got map[string]any
	poll(5*time.Second, func() bool {
		got = l.settings()
		return got["protection"] == "replay" && got["key_strategy"] == "uuid"
	})
	shown := eval[string](l, jsTid("protection")+".value + \" / \" + "+jsTid("key-strategy")+".value")
	if got["protection"] != "replay" || got["key_strategy"] != "uuid" {
		t.Errorf("after the keys, the lab has protection %v, key_strategy %v (the page shows %s); want replay / uuid: "+
			"changes made while a settings post was in flight were dropped", got["protection"], got["key_strategy"], shown)
	} else if shown != "replay / uuid" {
		t.Errorf("the lab has replay / uuid but the page's selects show %s", shown)
	}
}
