package web_test

// Browser tests: the lab's page in a real headless Chromium, driven only
// through the data-testid hooks of SPEC.md (Dashboard) with real clicks and
// keys, against a real lab server (startServer). One Chromium serves the whole
// test binary: it starts on the first browser test (sync.Once) and TestMain
// closes it. Every test has its own server, its own private lab and its own
// browser context (cookies such as the large-type switch stay in it), so the
// tests run in parallel without sharing state.
//
// Without Chromium the tests skip, except under CI=true, where they fail.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The one browser of the test binary.
var shared struct {
	once   sync.Once
	ctx    context.Context // a chromedp context whose browser is running
	cancel func()          // closes the browser and the allocator
	dir    string          // user data dir and TMPDIR, removed at the end
	err    error
}

var errNoChromium = errors.New("no Chromium found (install the Debian package chromium)")

// findChromium returns the path of a Chromium or Chrome binary.
func findChromium() (string, error) {
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errNoChromium
}

func startBrowser() {
	bin, err := findChromium()
	if err != nil {
		shared.err = err
		return
	}
	dir, err := os.MkdirTemp("", "idemlab-browser-")
	if err != nil {
		shared.err = err
		return
	}
	shared.dir = dir
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		shared.err = err
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Env("TMPDIR="+tmp),
		chromedp.WindowSize(1440, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	// The first Run ties the browser's life to its context, so it gets no
	// deadline; a watchdog ends a start that hangs.
	started := make(chan struct{})
	go func() {
		select {
		case <-started:
		case <-time.After(60 * time.Second):
			cancelCtx()
		}
	}()
	err = chromedp.Do(ctx)
	close(started)
	if err != nil {
		cancelCtx()
		cancelAlloc()
		shared.err = fmt.Errorf("start %s: %w", bin, err)
		return
	}
	shared.ctx = ctx
	shared.cancel = func() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		chromedp.Cancel(cctx)
		cancelCtx()
		cancelAlloc()
	}
}

func closeBrowser() {
	if shared.cancel != nil {
		shared.cancel()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// browser returns the shared browser, starting it on first use. Without
// Chromium the test skips, or fails when CI=true.
func browser(t *testing.T) context.Context {
	t.Helper()
	shared.once.Do(startBrowser)
	if shared.err != nil {
		if errors.Is(shared.err, errNoChromium) && os.Getenv("CI") != "true" {
			t.Skip(shared.err)
		}
		t.Fatal(shared.err)
	}
	return shared.ctx
}

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

// twin opens the same lab in a second tab of the same browser context.
func (l *labTab) twin() *labTab {
	l.t.Helper()
	o := *l
	o.tab, o.ctx = newTab(l.t, l.tab)
	o.navigate(o.url)
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
	if err != nil {
		l.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// poll waits until the JavaScript expression is truthy; false on timeout.
func (l *labTab) poll(expr string, timeout time.Duration) bool {
	l.t.Helper()
	_, err := chromedp.Run(l.ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(40*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil && !errors.Is(err, chromedp.ErrPollingTimeout) {
		l.t.Fatalf("poll %s: %v", expr, err)
	}
	return err == nil
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
			"\n  notice: " + (document.querySelector("#notice")?.textContent ?? "(absent)").trim().replace(/\s+/g, " ") +
			"\n  event-log: " + t("event-log").slice(0, 400);
	})()`))
	if err != nil {
		return "(page state unavailable: " + err.Error() + ")"
	}
	return s
}

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
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := l.settings()
		ok := true
		for k, v := range want {
			if fmt.Sprint(got[k]) != v {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("lab settings: got %v, want %v\n%s", got, want, l.state())
		}
		time.Sleep(50 * time.Millisecond)
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

func TestBrowserLesson1DoubleCharge(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	l.setSettings("protection", "none", "key-strategy", "none", "network", "response-lost")
	l.fireThenRetry()
	l.waitText("total-count", "2")
	if got := l.text("total-amount"); got != "3000" {
		t.Errorf("total-amount = %q, want 3000", got)
	}
	l.do(chromedp.WaitVisible(tid("double-charge-alert")))
	if n := l.count("payment-row"); n != 2 {
		t.Errorf("%d payment rows, want 2", n)
	}
	if led := l.s.ledger(l.prefix); led.Count != 2 || led.Total != 3000 {
		t.Errorf("ledger over HTTP: %d charges, %d ₽; want 2, 3000", led.Count, led.Total)
	}
}

func TestBrowserLesson2UniqueKey(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	l.setSettings("protection", "unique", "key-strategy", "uuid", "network", "response-lost")
	l.fireThenRetry()
	l.waitJS(`/duplicate/i.test(`+jsTid("event-log")+`?.textContent ?? "")`, `the event log to mention "duplicate"`)
	if got := l.text("total-count"); got != "1" {
		t.Errorf("total-count = %q, want 1", got)
	}
	if got := l.text("total-amount"); got != "1500" {
		t.Errorf("total-amount = %q, want 1500", got)
	}
	if n := l.count("double-charge-alert"); n != 0 {
		t.Errorf("double-charge-alert present (%d), want none", n)
	}
	if n := l.count("payment-row"); n != 1 {
		t.Errorf("%d payment rows, want 1", n)
	}
}

func TestBrowserTwoTabsLive(t *testing.T) {
	t.Parallel()
	a := openLab(t, `{"network":"ok"}`)
	b := a.twin()
	b.waitText("total-count", "0")
	a.do(chromedp.Click(tid("fire-charge")))
	a.waitText("total-count", "1")
	start := time.Now()
	if !b.poll(`(`+jsTid("total-count")+`?.textContent ?? "").trim() === "1"`, 5*time.Second) {
		t.Fatalf("second tab did not show the charge within 5 s, without reload\n%s", b.state())
	}
	t.Logf("second tab updated %v after the first showed the charge", time.Since(start).Round(time.Millisecond))
	// one message carries every region; htmx swaps them one after another
	if !b.poll(`document.querySelectorAll('[data-testid="payment-row"]').length === 1`, 2*time.Second) {
		t.Errorf("second tab: %d payment rows, want 1", b.count("payment-row"))
	}
}

func TestBrowserReset(t *testing.T) {
	t.Parallel()
	l := openLab(t, `{"network":"ok"}`)
	l.do(chromedp.Click(tid("fire-charge")))
	l.waitText("total-count", "1")
	l.do(
		chromedp.Click(tid("reset")),
		chromedp.WaitVisible(tid("reset-confirm")),
		chromedp.Click(tid("reset-confirm")),
	)
	l.waitText("total-count", "0")
	l.waitJS(`document.querySelectorAll('[data-testid="payment-row"]').length === 0`, "no payment rows")
	if got := l.text("total-amount"); got != "0" {
		t.Errorf("total-amount = %q, want 0", got)
	}
	if led := l.s.ledger(l.prefix); led.Count != 0 {
		t.Errorf("ledger over HTTP: %d charges after reset, want 0", led.Count)
	}
}

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
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got = l.settings()
		if got["protection"] == "replay" && got["key_strategy"] == "uuid" || time.Now().After(deadline) {
			break
		}
	}
	shown := eval[string](l, jsTid("protection")+".value + \" / \" + "+jsTid("key-strategy")+".value")
	if got["protection"] != "replay" || got["key_strategy"] != "uuid" {
		t.Errorf("after the keys, the lab has protection %v, key_strategy %v (the page shows %s); want replay / uuid: "+
			"changes made while a settings post was in flight were dropped", got["protection"], got["key_strategy"], shown)
	} else if shown != "replay / uuid" {
		t.Errorf("the lab has replay / uuid but the page's selects show %s", shown)
	}
}

// axeFinding is one rule result of axe-core.
type axeFinding struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		Summary string `json:"summary"`
	} `json:"nodes"`
}

func (f axeFinding) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s: %s (%d elements)", f.Impact, f.ID, f.Help, len(f.Nodes))
	for i, n := range f.Nodes {
		if i == 4 {
			fmt.Fprintf(&b, "\n      … %d more", len(f.Nodes)-i)
			break
		}
		fmt.Fprintf(&b, "\n      %v: %s", n.Target, strings.ReplaceAll(n.Summary, "\n", " / "))
	}
	return b.String()
}

// axeSource is axe-core's script, vendored under testdata.
func axeSource(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "testdata", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core: %v", err)
	}
	return string(src)
}

// axe runs axe-core in the page, logs every violation and every result that
// needs review, and fails on serious or critical violations.
func (l *labTab) axe(src, when string) {
	l.t.Helper()
	if !eval[bool](l, `typeof axe !== "undefined"`) {
		l.do(chromedp.Evaluate[chromedp.Void](src))
	}
	raw := eval[string](l, `axe.run(document, {resultTypes: ["violations", "incomplete"]}).then(r => {
		const f = (v) => ({id: v.id, impact: v.impact ?? "", help: v.help,
			nodes: v.nodes.map(n => ({target: n.target, summary: n.failureSummary ?? ""}))});
		return JSON.stringify({violations: r.violations.map(f), incomplete: r.incomplete.map(f)});
	})`)
	var res struct{ Violations, Incomplete []axeFinding }
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		l.t.Fatalf("axe result: %v", err)
	}
	var bad []string
	for _, v := range res.Violations {
		l.t.Logf("axe %s: violation %s", when, v)
		if v.Impact == "serious" || v.Impact == "critical" {
			bad = append(bad, v.String())
		}
	}
	for _, v := range res.Incomplete {
		l.t.Logf("axe %s: needs review %s", when, v)
	}
	l.t.Logf("axe %s: %d violations, %d to review", when, len(res.Violations), len(res.Incomplete))
	if len(bad) > 0 {
		l.t.Errorf("axe %s: %d serious or critical violations:\n  %s", when, len(bad), strings.Join(bad, "\n  "))
	}
}

func TestBrowserAxe(t *testing.T) {
	t.Parallel()
	src := axeSource(t)
	l := openLab(t, lesson1Settings)
	l.axe(src, "empty lab")
	l.doubleCharge()
	l.axe(src, "after a double charge")
	for _, lang := range []string{"en", "ru"} {
		l.navigate(l.url + "?lang=" + lang)
		l.do(chromedp.Click(chromedp.CSS(`[data-testid="lesson-choose"][value="1"]`)))
		l.waitJS(`document.querySelector("#lesson-state")?.dataset.lesson === "1"`, "lesson 1 to open")
		l.axe(src, "with lesson 1 open ("+lang+")")
		l.do(chromedp.Click(tid("lesson-setup")))
		l.waitJS(`document.querySelector("#lesson-state")?.dataset.ready === "yes"`, "lesson 1 to be set up")
		l.do(chromedp.Click(tid("lesson-step")))
		l.waitJS(`document.querySelector("#lesson-state")?.dataset.next === "1"`, "lesson 1's first step")
		l.axe(src, "in lesson 1, after a step ("+lang+")")
		l.do(chromedp.Click(tid("lesson-close")))
		l.waitJS(`document.querySelector("#lesson-state")?.dataset.lesson === "0"`, "the lesson to close")
	}
}

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
// done, two frames drawn) and writes a full-page PNG.
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
	png, err := chromedp.Run(l.ctx, chromedp.FullScreenshot(100))
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
