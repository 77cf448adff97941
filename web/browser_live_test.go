package web_test

import (
	"fmt"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// A setting changed in one browser shows in every other browser of the lab.
func TestBrowserSettingsShowInEveryTab(t *testing.T) {
	t.Parallel()
	first := openLab(t, "")
	second := first.twin("")
	first.setSettings("protection", "unique", "key-strategy", "natural")
	second.waitJS(`document.querySelector('[data-testid="protection"]').value === "unique" &&
		document.querySelector('[data-testid="key-strategy"]').value === "natural"`, "the second tab's selects to follow")
}

// While an automatic retry loop runs, the page says how it goes.
func TestBrowserAutoRetryProgress(t *testing.T) {
	t.Parallel()
	l := openLab(t, `{"network":"request-lost","retry":{"mode":"auto","max_attempts":3,"base_ms":700,"cap_ms":700,"jitter":"none"}}`)
	if got := eval[bool](l, jsTid("auto-retry")+".checked"); !got {
		t.Fatal("the auto-retry switch is off for a lab whose retry mode is auto")
	}
	l.do(chromedp.Click(tid("fire-charge")))
	l.waitJS(`/attempt 2 of 3/.test(document.querySelector("#retry-progress").textContent)`, "progress: attempt 2 of 3")
	l.waitJS(`document.querySelectorAll('[data-testid="attempt"]').length === 3`, "three attempts in the diagram")
	l.waitJS(`document.querySelector("#retry-progress").textContent.trim() === ""`, "the progress to clear at the end")
}

// After the server restarts, open pages reconnect and go on updating.
func TestBrowserReconnectsAfterRestart(t *testing.T) {
	t.Parallel()
	b := browser(t)
	db := filepath.Join(t.TempDir(), "lab.db")
	addr := freeAddr(t)
	a := startServer(t, withDB(db), withAddr(addr))
	prefix := a.newLab("")
	l := &labTab{t: t, url: "http://" + addr + "/labs/" + path.Base(prefix), prefix: prefix}
	l.tab, l.ctx = newTab(t, b, chromedp.WithNewBrowserContext())
	// Record the live stream's events from the page's start: the test waits
	// for the stream to be up, and a failure shows what the stream did.
	if _, err := chromedp.Call(l.ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__sse = []; ["htmx:sse:error","htmx:sse:before:connection","htmx:sse:after:connection","htmx:sse:close","htmx:sse:after:message"].forEach(n => document.addEventListener(n, e => window.__sse.push(performance.now().toFixed(0) + " " + n + " " + (e.detail?.error?.message ?? "") + " " + (e.detail?.reason ?? ""))));`,
	}); err != nil {
		t.Fatal(err)
	}
	l.navigate(l.url) // and the live stream is up

	a.Stop()
	l.waitJS(`document.querySelector("#live-status").dataset.state === "down"`, "the page to say it is not live")
	startServer(t, withDB(db), withAddr(addr)) // the same address and database: the lab, restarted
	resp, err := http.Post("http://"+addr+prefix+"/charges", "application/json", strings.NewReader(`{"order_id":"order-1","amount":100}`))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("charge after restart: %v %v", resp, err)
	}
	resp.Body.Close()
	if !l.poll(`document.querySelector('[data-testid="total-count"]').textContent.trim() === "1" &&
		document.querySelector("#live-status").dataset.state === "live"`, 20*time.Second) {
		t.Fatalf("the page did not catch up after the restart\n%s\nsse: %v", l.state(), eval[[]string](l, "window.__sse"))
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// The article's checklist answers for the lab's settings, and flips as they
// change: from protection none to replay, questions 3 and 4 turn to yes.
func TestBrowserChecklistFollowsSettings(t *testing.T) {
	t.Parallel()
	l := openLab(t, `{"protection":"none","key_strategy":"uuid"}`)
	answers := `[...document.querySelectorAll("#checklist li")].map(li => li.dataset.answer).join(",")`
	if got := eval[string](l, answers); got != "yes,yes,no,no" {
		t.Fatalf("checklist under none/uuid: %s, want yes,yes,no,no", got)
	}
	second := l.twin("?lang=ru") // in Russian: each stream renders in its page's language
	l.setSettings("protection", "replay")
	for _, tab := range []*labTab{l, second} {
		tab.waitJS(answers+` === "yes,yes,yes,yes"`, "the checklist to flip under replay")
	}
	said := `[...document.querySelectorAll("#checklist li .a strong")].map(s => s.textContent.trim()).join(" ")`
	if got := eval[string](l, said); got != "✓ Yes. ✓ Yes. ✓ Yes. ✓ Yes." {
		t.Errorf("English tab: %q", got)
	}
	if got := eval[string](second, said); got != "✓ Да. ✓ Да. ✓ Да. ✓ Да." {
		t.Errorf("Russian tab: %q", got)
	}
}

// The main actions have keys; "?" shows them.
func TestBrowserKeyboardShortcuts(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	l.do(chromedp.KeyEvent("?"))
	l.waitJS(`document.querySelector('[data-testid="shortcuts"]').matches(":popover-open")`, "the shortcut list")
	l.do(chromedp.KeyEvent("?"))
	l.waitJS(`!document.querySelector('[data-testid="shortcuts"]').matches(":popover-open")`, "the shortcut list to close")
	l.do(chromedp.KeyEvent("c"))
	l.waitText("total-count", "1")
	l.do(chromedp.KeyEvent("r"))
	l.waitText("total-count", "2")
}

// A scenario link opened in a second, fresh browser rebuilds a lab with the
// same ledger.
func TestBrowserSharedScenario(t *testing.T) {
	t.Parallel()
	l := openLab(t, lesson1Settings)
	l.doubleCharge()
	// the lab's settings, the charge, the network set to ok, the retry: 4 actions at least
	if !l.poll(`/ ([4-9]|\d\d) /.test(document.querySelector("#scenario").textContent)`, 10*time.Second) {
		t.Fatalf("scenario line: %q", eval[string](l, `document.querySelector("#scenario").textContent`))
	}
	href := eval[string](l, `document.querySelector('[data-testid="scenario-link"]').getAttribute("href")`)
	other := &labTab{t: t, s: l.s}
	other.tab, other.ctx = newTab(t, browser(t), chromedp.WithNewBrowserContext())
	other.navigate(l.s.URL + href) // and the live stream is up
	rebuilt := eval[string](other, `location.pathname`)
	if !strings.HasPrefix(rebuilt, "/labs/") || rebuilt == strings.TrimPrefix(l.url, l.s.URL) {
		t.Fatalf("the scenario opened %q", rebuilt)
	}
	other.waitText("total-count", "2")
	a, b := l.s.ledger(l.prefix), l.s.ledger("/api/v1/labs/"+strings.TrimPrefix(rebuilt, "/labs/"))
	if a.Count != b.Count || a.Total != b.Total || len(a.Payments) != len(b.Payments) {
		t.Fatalf("ledgers differ: %+v vs %+v", a, b)
	}
	for i := range a.Payments {
		if a.Payments[i].OrderID != b.Payments[i].OrderID || a.Payments[i].Amount != b.Payments[i].Amount {
			t.Errorf("payment %d: %+v vs %+v", i, a.Payments[i], b.Payments[i])
		}
	}
}

// A live update swaps the regions that changed and leaves the others as
// they stand: the nodes of a region the update did not change are the
// same nodes after it, after a form's answer too. Whatever mix of updates,
// form answers and settings the page lived through, its regions end as a
// page loaded afresh draws them.
func TestBrowserLiveUpdateSwapsWhatChanged(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	byID := func(id string) string { return fmt.Sprintf("document.getElementById(%q)", id) }
	regions := []string{"totals", "payments", "mailbox", "queue", "orders", "checklist", "scenario", "lesson-state", "storm", "stepped", "class", "diagram-region", "event-log"}
	unchanged := []string{"mailbox", "queue", "orders", "checklist", "storm", "stepped", "class"}
	changed := []string{"totals", "payments"}
	for _, id := range append(changed, unchanged...) {
		eval[bool](l, `(`+byID(id)+`.dataset.before = "charge", true)`)
	}
	l.s.must(http.StatusCreated, "POST", l.prefix+"/charges", `{"order_id":"order-1","amount":100}`)
	l.waitText("total-count", "1")
	for _, id := range unchanged {
		if !eval[bool](l, byID(id)+`.dataset.before === "charge"`) {
			t.Errorf("#%s was swapped by an update that did not change it", id)
		}
	}
	for _, id := range changed {
		if eval[bool](l, byID(id)+`.dataset.before === "charge"`) {
			t.Errorf("#%s was not swapped by an update that changed it", id)
		}
	}
	for _, id := range unchanged { // the mark is this test's, not the page's
		eval[bool](l, `(delete `+byID(id)+`.dataset.before, true)`)
	}
	// a form's answer draws every region; the stream's updates after it
	// swap none that the answer drew as it stands (live.js, keep)
	eval[bool](l, `(() => { window.streamSwaps = []; window.answered = false;
		document.addEventListener("htmx:before:swap", e => {
			const src = e.detail?.ctx?.sourceElement;
			if (!src?.hasAttribute?.("hx-sse:connect")) { window.answered = true; return; }
			if (window.answered) for (const t of e.detail.tasks) if (t.type === "partial" && t.target?.id) window.streamSwaps.push(t.target.id);
		});
		return true; })()`)
	l.do(chromedp.Click(tid("fire-charge")))
	l.waitText("total-count", "2")
	l.s.must(http.StatusCreated, "POST", l.prefix+"/charges", `{"order_id":"order-2","amount":200}`)
	l.waitText("total-count", "3")
	l.waitJS(`window.streamSwaps.includes("totals")`, "the stream's update after the answer")
	if swapped := eval[[]string](l, `window.streamSwaps.filter(id => ["`+strings.Join(unchanged, `","`)+`"].includes(id))`); len(swapped) > 0 {
		t.Errorf("after a form's answer, the stream swapped again regions it did not change: %v", swapped)
	}
	// a change of settings, another update
	l.s.must(http.StatusOK, "PATCH", l.prefix+"/settings", `{"protection":"unique"}`)
	l.waitJS(jsTid("protection")+`.value === "unique"`, "the protection to follow")
	l.s.must(http.StatusCreated, "POST", l.prefix+"/charges", `{"order_id":"order-3","amount":300}`)
	l.waitText("total-count", "4")
	fresh := l.twin("")
	for _, id := range regions {
		js := byID(id) + `?.outerHTML ?? "(absent)"`
		if got, want := eval[string](l, js), eval[string](fresh, js); got != want {
			t.Errorf("#%s after the live updates differs from a fresh page's:\n%s\nfresh:\n%s", id, got, want)
		}
	}
}
