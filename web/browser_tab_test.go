package web_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// tid selects the element of a SPEC data-testid hook.
func tid(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }

// jsTid is the same selector for use inside JavaScript.
func jsTid(id string) string { return fmt.Sprintf("document.querySelector('[data-testid=%q]')", id) }

// labTab is one browser tab on a private lab of the test's own server.
type labTab struct {
	t      *testing.T
	s      *testServer
	prefix string // /api/v1/labs/{id}
	url    string // the lab's page
	ctx    context.Context
	tab    context.Context // the chromedp context, without the deadline
}

// openLab starts a server (with opts: withParts for the broker, mailbox
// and Redis), creates a private lab with the settings patch (JSON, may be
// empty) and opens its page in a tab of a new browser context.
func openLab(t *testing.T, settings string, opts ...func(*serverOpts)) *labTab {
	t.Helper()
	b := browser(t)
	s := startServer(t, opts...)
	prefix := s.newLab(settings)
	l := &labTab{t: t, s: s, prefix: prefix, url: s.URL + "/labs/" + path.Base(prefix)}
	l.tab, l.ctx = newTab(t, b, chromedp.WithNewBrowserContext())
	l.navigate(l.url)
	return l
}

// newTab opens a tab; a child of another tab's context shares its browser
// context (cookies).
func newTab(t *testing.T, parent context.Context, opts ...chromedp.ContextOption) (tab, ctx context.Context) {
	t.Helper()
	tab, cancel := chromedp.NewContext(parent, opts...)
	t.Cleanup(cancel)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	ctx, cancelDeadline := context.WithTimeout(tab, 120*time.Second)
	t.Cleanup(cancelDeadline)
	return tab, ctx
}

// twin opens the same lab in a second tab of the same browser context, at
// the page's address with query ("" or "?lang=ru").
func (l *labTab) twin(query string) *labTab {
	l.t.Helper()
	o := *l
	o.tab, o.ctx = newTab(l.t, l.tab)
	o.navigate(o.url + query)
	return &o
}

// navigate loads a page and waits until htmx has set it up.
func (l *labTab) navigate(url string) {
	l.t.Helper()
	l.do(chromedp.Navigate(url))
	l.waitJS(`document.readyState === "complete" && typeof htmx !== "undefined"`, "the page and htmx to load")
	// and until the live stream is up: a change before that would be missed
	if !l.poll(`document.querySelector("#live-status")?.dataset.state === "live"`, 30*time.Second) {
		l.t.Fatalf("timed out waiting for the live stream (live-status %q, page %s)\n%s\nevents over HTTP: %s", eval[string](l, `document.querySelector("#live-status")?.dataset.state ?? "none"`), eval[string](l, `document.readyState + ", htmx " + typeof htmx`), l.state(), l.probeEvents())
	}
}

func (l *labTab) do(actions ...chromedp.Action[chromedp.Void]) {
	l.t.Helper()
	if err := chromedp.Do(l.ctx, actions...); err != nil {
		l.t.Fatalf("browser: %v\n%s", err, l.state())
	}
}

// eval evaluates a JavaScript expression in the page and decodes its value.
func eval[T any](l *labTab, expr string) T {
	l.t.Helper()
	v, err := chromedp.Run(l.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	for try := 0; err != nil && contextSwapped(err) && try < 3; try++ {
		l.newDocument()
		v, err = chromedp.Run(l.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	}
	if err != nil {
		l.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// poll waits until the JavaScript expression is truthy; false on timeout.
// A page still loading may swap its JavaScript context under the poll
// ("Cannot find context with specified id"): the poll starts again in the
// new one until the timeout.
func (l *labTab) poll(expr string, timeout time.Duration) bool {
	l.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		_, err := chromedp.Run(l.ctx, chromedp.Poll[chromedp.Void](expr,
			chromedp.WithPollingInterval(40*time.Millisecond), chromedp.WithPollingTimeout(left)))
		switch {
		case err == nil:
			return true
		case errors.Is(err, chromedp.ErrPollingTimeout):
			return false
		case contextSwapped(err) && l.ctx.Err() == nil:
			l.newDocument()
		default:
			l.t.Fatalf("poll %s: %v", expr, err)
		}
	}
}

// newDocument waits until the document that replaced the page's last one
// has a body, and so a JavaScript context to evaluate in.
func (l *labTab) newDocument() {
	l.t.Helper()
	if _, err := chromedp.Run(l.ctx, chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		l.t.Fatalf("wait for the new document: %v", err)
	}
}

// contextSwapped reports an error of a page whose JavaScript context went
// away under an evaluation because it navigated or reloaded.
func contextSwapped(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Cannot find context with specified id") ||
		strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Inspected target navigated or closed")
}

// holds reports whether the JavaScript expression stays truthy for d: the
// way to see that something does not happen (the page's own timers run in
// real time, so the window is real time too).
func (l *labTab) holds(expr string, d time.Duration) bool {
	l.t.Helper()
	return !l.poll("!("+expr+")", d)
}

// waitJS waits (10 s at most) until the expression is truthy, or fails.
func (l *labTab) waitJS(expr, what string) {
	l.t.Helper()
	if !l.poll(expr, 10*time.Second) {
		l.t.Fatalf("timed out waiting for %s\n%s", what, l.state())
	}
}

// text is the trimmed text of a hook ("" when it is absent).
func (l *labTab) text(id string) string {
	l.t.Helper()
	return eval[string](l, fmt.Sprintf(`(%s?.textContent ?? "").trim()`, jsTid(id)))
}

func (l *labTab) count(id string) int {
	l.t.Helper()
	return eval[int](l, fmt.Sprintf(`document.querySelectorAll('[data-testid=%q]').length`, id))
}

// waitText waits until a hook's text is want.
func (l *labTab) waitText(id, want string) {
	l.t.Helper()
	l.waitJS(fmt.Sprintf(`(%s?.textContent ?? "").trim() === %q`, jsTid(id), want), id+" = "+want)
}

// state describes the page for a failure message.
func (l *labTab) state() string {
	ctx, cancel := context.WithTimeout(l.tab, 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const t = (id) => (document.querySelector('[data-testid="' + id + '"]')?.textContent ?? "(absent)").trim().replace(/\s+/g, " ");
		return "page: " + location.href +
			"\n  total-count=" + t("total-count") + " total-amount=" + t("total-amount") +
			" payment-rows=" + document.querySelectorAll('[data-testid="payment-row"]').length +
			" attempts=" + document.querySelectorAll('[data-testid="attempt"]').length +
			" diagram op=" + document.querySelector("#sequence-diagram")?.dataset.op + " h=" + document.querySelector("#sequence-diagram")?.dataset.h +
			"\n  notice: " + (document.querySelector("#notice")?.textContent ?? "(absent)").trim().replace(/\s+/g, " ") +
			"\n  event-log: " + t("event-log").slice(0, 400);
	})()`))
	if err != nil {
		return "(page state unavailable: " + err.Error() + ")"
	}
	return s
}

// probeEvents reads the first bytes of the lab's event stream over plain HTTP.
func (l *labTab) probeEvents() string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", l.url+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	buf := make([]byte, 200)
	n, err := io.ReadAtLeast(resp.Body, buf, 100)
	return fmt.Sprintf("%d %q %v", resp.StatusCode, buf[:n], err)
}

// together runs a test's subtests at once, each in a goroutine of its own,
// from the moment the test itself runs. Parallel subtests would instead
// wait for a slot behind every test already queued, and the longest browser
// tests would start last and make the suite's tail.
type together struct {
	t  *testing.T
	wg sync.WaitGroup
}

// run starts the subtest.
func (g *together) run(name string, f func(t *testing.T)) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		g.t.Run(name, f)
	}()
}

// wait returns when every subtest has ended.
func (g *together) wait() { g.wg.Wait() }
