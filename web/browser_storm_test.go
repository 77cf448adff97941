package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The storm's lab: a server that takes 50 charges a second, clients that
// retry by themselves without jitter and ignore Retry-After.
const stormSettings = `{"protection":"replay","key_strategy":"uuid","capacity_rps":40,
"retry":{"mode":"auto","max_attempts":5,"base_ms":300,"cap_ms":2400,"jitter":"none","respect_retry_after":false}}`

// stormWords are what the panel says, by language.
var stormWords = map[string]map[string]string{
	"en": {"storm": "Storm 2:", "jitter-none": "jitter none", "jitter-full": "jitter full", "down": "server down"},
	"ru": {"storm": "Шторм 2:", "jitter-none": "джиттер: нет", "jitter-full": "джиттер: полный", "down": "сервер лежит"},
}

// A storm started from the page's Storm panel, in both languages: the
// chart grows while the storm runs (each redraw comes over the live
// stream), the outage is shaded, the numbers are in a table; then the
// jitter switched to full and a second storm: both on one time axis,
// captioned with their jitter. Shot at 1920×1080 and 1280×720, axed; on a
// phone, the page must not scroll sideways.
func TestBrowserStormDrawnLive(t *testing.T) {
	t.Parallel()
	src := axeSource(t)
	dir := screenshotDir(t)
	for _, lang := range []string{"en", "ru"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			l := openLab(t, stormSettings)
			l.do(chromedp.EmulateViewport(1280, 720))
			l.navigate(l.url + "?lang=" + lang)
			if !eval[bool](l, jsTid("storm")+`.hidden`) {
				t.Errorf("%s: the storm panel shows before any storm", lang)
			}
			l.do(chromedp.Click(tid("tab-storm")))
			l.waitJS(`document.getElementById("dock-storm").checkVisibility()`, "the Storm panel")
			l.shoot(dir, "storm-form-"+lang+"-1280x720.png")
			l.startStorm()
			l.waitJS(jsTid("storm")+`.dataset.running === "yes" && !`+jsTid("storm")+`.hidden`, "the storm panel, running")
			// live: the running storm's chart is redrawn as it goes
			first := l.stormBuckets()
			l.waitJS(fmt.Sprintf(`+document.querySelector('[data-testid="storm-run"][data-state="running"]')?.dataset.buckets > %d`, first), "the chart to grow while the storm runs")
			l.waitJS(jsTid("storm")+`.dataset.running === "no"`, "the storm's end")
			if got := l.count("storm-run"); got != 1 {
				t.Errorf("%s: %d storms drawn after the first, want 1", lang, got)
			}
			l.s.must(http.StatusOK, "PATCH", l.prefix+"/settings", `{"retry":{"jitter":"full"}}`)
			l.startStorm()
			l.waitJS(jsTid("storm")+`.dataset.storms === "2" && `+jsTid("storm")+`.dataset.running === "no"`, "the second storm's end")
			caps := eval[[]string](l, `[...document.querySelectorAll('[data-testid="storm-run"] figcaption')].map(c => c.textContent)`)
			w := stormWords[lang]
			if len(caps) != 2 || !strings.Contains(caps[0], w["jitter-none"]) || !strings.Contains(caps[1], w["jitter-full"]) || !strings.Contains(caps[1], w["storm"]) {
				t.Errorf("%s: the captions %q; want storm 1 with %q and storm 2 with %q", lang, caps, w["jitter-none"], w["jitter-full"])
			}
			// one axis: both charts share their scale, and both shade the outage
			boxes := eval[[]string](l, `[...document.querySelectorAll('.storm-chart')].map(s => s.getAttribute("viewBox") + " " + s.querySelector(".s-down")?.getAttribute("x") + " " + s.querySelector(".s-tick")?.textContent)`)
			if len(boxes) != 2 || boxes[0] != boxes[1] || strings.Contains(boxes[0], "undefined") {
				t.Errorf("%s: the two charts' boxes, outages and scales %q; want the same", lang, boxes)
			}
			for _, link := range []string{"storm-csv", "storm-json"} {
				href := eval[string](l, `new URL(`+jsTid(link)+`.href).pathname`)
				if r := l.s.do("GET", href, ""); r.Status != http.StatusOK || len(r.Body) < 100 {
					t.Errorf("%s: the %s link %s: %d, %d bytes", lang, link, href, r.Status, len(r.Body))
				}
			}
			if rows := eval[int](l, `document.querySelectorAll('[data-testid="storm-table"] tbody tr').length`); rows < 4 {
				t.Errorf("%s: the storms' tables hold %d rows, want a row a second of each", lang, rows)
			}
			for _, size := range [][2]int64{{1920, 1080}, {1280, 720}} {
				l.do(chromedp.EmulateViewport(size[0], size[1]))
				// the panel scrolls within the column when its storms are taller
				l.waitJS(`(document.querySelectorAll('.storm-chart')[1].scrollIntoView({block: "nearest"}), document.querySelectorAll('.storm-chart')[1].getBoundingClientRect().bottom <= innerHeight)`, fmt.Sprintf("%d×%d: the second chart in the window", size[0], size[1]))
				l.shoot(dir, fmt.Sprintf("storm-two-%s-%dx%d.png", lang, size[0], size[1]))
			}
			l.axe(src, "two storms drawn ("+lang+")")
			l.do(chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
			l.shoot(dir, "storm-two-"+lang+"-phone-375x812.png")
			l.fitsWidth(lang+", two storms drawn", 375, "#storm")
			l.wideStorms(src, dir, lang)
		})
	}
}

// startStorm fills the Storm panel's form and starts a storm: 200 clients
// for 2 s, the server down from 0.5 s for 1.5 s.
func (l *labTab) startStorm() {
	l.t.Helper()
	l.do(chromedp.Click(tid("tab-storm")))
	l.waitJS(`document.getElementById("dock-storm").checkVisibility() && !`+jsTid("storm-start")+`.disabled`, "the Storm panel, ready")
	// filled and sent in one task of the page: a live update that swaps
	// the form between two steps would leave a step on a node gone
	l.do(chromedp.Evaluate[chromedp.Void](`(() => {
		const v = {"storm-clients": "200", "storm-duration": "2", "storm-every": "10", "storm-outage-at": "0.5", "storm-outage-for": "1.5"};
		for (const id in v) document.querySelector('[data-testid="' + id + '"]').value = v[id];
		document.querySelector('[data-testid="storm-start"]').click();
	})()`))
	l.waitJS(jsTid("storm-start")+`.disabled || `+jsTid("storm")+`.dataset.running === "yes"`, "the storm to start")
}

// stormBuckets is how many tenths the running storm's chart draws now.
func (l *labTab) stormBuckets() int {
	l.t.Helper()
	return eval[int](l, `+(document.querySelector('[data-testid="storm-run"][data-state="running"]')?.dataset.buckets ?? 0)`)
}

// wideStorms opens the storms' own page from the panel: the two storms
// side by side as wide as the screen, shot and axed; then a third storm,
// started through the API, drawn there as it runs, beside the second.
func (l *labTab) wideStorms(src, dir, lang string) {
	l.t.Helper()
	l.do(chromedp.EmulateViewport(1920, 1080))
	l.do(chromedp.Click(tid("storm-wide")))
	l.waitAfterNavigation(`document.querySelectorAll('[data-testid="storms-region"] [data-testid="storm-run"]').length === 2`, "the storms page with two storms")
	tops := eval[[]float64](l, `[...document.querySelectorAll('.storms-side .storm-chart')].map(c => Math.round(c.getBoundingClientRect().top))`)
	if len(tops) != 2 || tops[0] != tops[1] {
		l.t.Errorf("%s: the storms page's charts start at %v; want side by side", lang, tops)
	}
	l.shoot(dir, "storms-page-"+lang+"-1920x1080.png")
	// one main landmark, the frame's: axe calls a second one moderate, and lets it pass
	if n := eval[int](l, `document.querySelectorAll("main, [role=main]").length`); n != 1 {
		l.t.Errorf("%s: the storms page has %d main landmarks, want 1", lang, n)
	}
	l.axe(src, "the storms page ("+lang+")")
	second := eval[string](l, `document.querySelectorAll('[data-testid="storm-run"]')[1].dataset.storm`)
	l.s.must(http.StatusCreated, "POST", l.prefix+"/storms", `{"clients":50,"duration_s":3}`)
	l.waitJS(`document.querySelector('[data-testid="storms-region"]').dataset.running === "yes"`, "the storms page to see the third storm run")
	l.waitJS(fmt.Sprintf(`(() => { const runs = document.querySelectorAll('[data-testid="storm-run"]');
		return document.querySelector('[data-testid="storms-region"]').dataset.running === "no" && runs[0].dataset.storm === %q && runs[1].dataset.state === "done"; })()`, second),
		"the third storm drawn to its end, beside the second")
	l.do(chromedp.EmulateViewport(1280, 720))
	l.shoot(dir, "storms-page-"+lang+"-1280x720.png")
}
