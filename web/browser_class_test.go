package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The class in both languages: the teacher starts it on the page, three
// phone-sized pages join by the code and vote, the teacher runs the step,
// and every page shows the reveal; axe finds nothing serious on the
// projector or a phone.
func TestBrowserClass(t *testing.T) {
	t.Parallel()
	src := axeSource(t)
	for _, lang := range []string{"en", "ru"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			classInBrowser(t, src, lang)
		})
	}
}

func classInBrowser(t *testing.T, axeSrc, lang string) {
	dir := screenshotDir(t)
	l := openLab(t, "")
	l.navigate(l.url + "?lang=" + lang)
	l.s.lessonAt(l.prefix, 1, "", 1) // lesson 1, its answer lost: the retry is next
	l.do(chromedp.EmulateViewport(1920, 1080), chromedp.Click(tid("share")), chromedp.Click(tid("class-start")))
	l.waitJS(`/^[A-Z2-9]{6}$/.test(`+jsTid("class-code")+`?.textContent ?? "")`, "the join code")
	code := l.text("class-code")
	l.waitJS(jsTid("class-ask")+` !== null`, "the question's button")
	l.do(chromedp.Click(tid("class-ask")))
	l.waitJS(jsTid("class-question")+`?.dataset.state === "open"`, "the question to open")
	votes := []string{"2", "2", "1"}
	var phones []*labTab
	for i, choice := range votes {
		p := l.phone(code, lang)
		p.do(chromedp.Click(fmt.Sprintf(`[data-testid="phone-choice"][value=%q]`, choice)), chromedp.Click(tid("phone-vote")))
		p.waitJS(jsTid("phone-mine")+` !== null`, fmt.Sprintf("phone %d's vote to be taken", i))
		phones = append(phones, p)
	}
	l.waitJS(`(`+jsTid("class-votes")+`?.textContent ?? "").includes("3")`, "the projector to count 3 votes")
	l.shoot(dir, "class-open-1920-"+lang+".png")
	l.do(chromedp.EmulateViewport(1280, 720))
	// the join address wraps before its code, never inside it
	if url := l.text("class-url"); !strings.HasSuffix(url, "/join/"+code) || strings.ContainsAny(url, " \n") {
		t.Errorf("the join address reads %q", url)
	}
	if lines := eval[int](l, `(() => {
		const r = document.createRange();
		r.selectNodeContents(document.querySelector('[data-testid="class-url"]').lastChild);
		return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size;
	})()`); lines != 1 {
		t.Errorf("the join code at 1280×720 spans %d lines, want 1", lines)
	}
	l.shoot(dir, "class-open-1280-"+lang+".png")
	phones[0].shoot(dir, "phone-open-"+lang+".png")
	l.axe(axeSrc, "the projector, a question open ("+lang+")")
	phones[0].axe(axeSrc, "a phone, voted ("+lang+")")
	l.joinScreen(dir, axeSrc, lang)

	l.do(chromedp.Click(tid("class-run")))
	l.waitJS(jsTid("class-question")+`?.dataset.state === "revealed"`, "the reveal")
	if right := eval[string](l, `document.querySelector('[data-testid="class-choice"][data-right="yes"]')?.dataset.choice ?? ""`); right != "2" {
		t.Errorf("the projector marks %q right, want 2", right)
	}
	if share := l.text("class-share"); !strings.Contains(share, "67") {
		t.Errorf("class-share %q, want 67%%", share)
	}
	start := time.Now()
	for i, p := range phones {
		// A phone asks every second; the bound only keeps a stuck phone from
		// hanging the test (CI's loaded browsers once took over 5 s).
		if !p.poll(jsTid("phone-you")+` !== null`, 15*time.Second) {
			now := eval[string](p, `(document.getElementById("phone-now")?.outerHTML ?? "(no #phone-now)").slice(0, 600) + " visibility=" + document.visibilityState`)
			t.Fatalf("phone %d did not show the reveal within 15 s: %s\n%s", i, now, p.state())
		}
	}
	t.Logf("the phones showed the reveal %v after the projector", time.Since(start).Round(time.Millisecond))
	l.shoot(dir, "class-revealed-1280-"+lang+".png")
	l.do(chromedp.EmulateViewport(1920, 1080))
	l.shoot(dir, "class-revealed-1920-"+lang+".png")
	phones[2].shoot(dir, "phone-revealed-"+lang+".png")
	l.axe(axeSrc, "the projector, revealed ("+lang+")")
	phones[2].axe(axeSrc, "a phone, revealed ("+lang+")")
}

// joinScreen opens the page the class's QR code links to, in a tab of the
// teacher's browser at 1280×720: its QR code fills most of the window's
// height, and it passes axe.
func (l *labTab) joinScreen(dir, axeSrc, lang string) {
	l.t.Helper()
	o := *l
	o.url = l.s.URL + eval[string](l, `document.querySelector('[data-testid="class-screen"]').getAttribute("href")`) + "?lang=" + lang
	o.tab, o.ctx = newTab(l.t, l.tab)
	o.do(chromedp.EmulateViewport(1280, 720), chromedp.Navigate(o.url))
	o.waitJS(`document.querySelector('[data-testid="screen-qr"]')?.complete === true`, "the join screen's QR code")
	if side := eval[float64](&o, `document.querySelector('[data-testid="screen-qr"]').getBoundingClientRect().width`); side < 400 {
		l.t.Errorf("the join screen's QR code is %.0f px wide at 1280×720, want at least 400", side)
	}
	o.axe(axeSrc, "the join screen ("+lang+")")
	o.shoot(dir, "class-screen-1280-"+lang+".png")
}

// phone opens the class's page in a phone-sized tab of a browser context
// of its own (its own voter cookie).
func (l *labTab) phone(code, lang string) *labTab {
	l.t.Helper()
	o := *l
	o.tab, o.ctx = newTab(l.t, browser(l.t), chromedp.WithNewBrowserContext())
	o.url = l.s.URL + "/join/" + code + "?lang=" + lang
	o.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(o.url))
	o.waitJS(`document.readyState === "complete" && typeof htmx !== "undefined"`, "the phone page and htmx to load")
	return &o
}

// While a class runs, Play stops at a step with a question: it asks it and
// pauses; Run the step takes the step, and Play goes on to the next. Only
// the teacher's browser shows the class's controls: another browser on the
// lab, open before the class began, sees the class and who steers it; when
// that browser starts the next class, the controls move to it.
func TestBrowserClassPlayPauses(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	l.s.lessonAt(l.prefix, 2, "", 0)
	other := &labTab{t: t, s: l.s, url: l.url}
	other.tab, other.ctx = newTab(t, browser(t), chromedp.WithNewBrowserContext())
	other.navigate(l.url)
	l.do(chromedp.Click(tid("share")), chromedp.Click(tid("class-start")))
	l.waitJS(jsTid("class-ask")+` !== null`, "the class to start")
	shown := func(id string) string { return `(` + jsTid(id) + `?.getClientRects().length ?? 0) > 0` }
	// the teacher's page learns that it steers from its form's answer,
	// which may come after the live update that drew the class
	l.waitJS(shown("class-ask")+` && `+shown("class-end")+` && !`+shown("class-viewer"), "the class's controls in the teacher's browser")
	other.waitJS(jsTid("class-code")+` !== null`, "the class in another browser")
	for id, want := range map[string]bool{"class-viewer": true, "class-code": true, "class-ask": false, "class-end": false} {
		if got := eval[bool](other, shown(id)); got != want {
			t.Errorf("another browser: %s shown %v, want %v", id, got, want)
		}
	}
	l.do(chromedp.Click(tid("lesson-play")))
	l.waitJS(jsTid("class-question")+`?.dataset.state === "open"`, "Play to ask step 1's question")
	l.waitJS(`!`+jsTid("lesson-play")+`.disabled`, "Play to pause")
	if next := eval[string](l, `document.querySelector("#lesson-state").dataset.next`); next != "0" {
		t.Errorf("Play took step %s before the vote", next)
	}
	other.waitJS(jsTid("class-question")+`?.dataset.state === "open"`, "the question in another browser")
	if eval[bool](other, shown("class-run")) {
		t.Error("another browser: class-run is shown")
	}
	other.shoot(screenshotDir(t), "class-another-browser.png")
	l.shoot(screenshotDir(t), "class-teachers-browser.png")
	l.do(chromedp.Click(tid("class-run")))
	l.waitJS(jsTid("class-question")+`?.dataset.state === "revealed"`, "the reveal")
	l.do(chromedp.Click(tid("lesson-play")))
	l.waitJS(jsTid("class-question")+`?.dataset.n === "2" && `+jsTid("class-question")+`.dataset.state === "open"`, "Play to ask step 2's question")
	if next := eval[string](l, `document.querySelector("#lesson-state").dataset.next`); next != "1" {
		t.Errorf("after the reveal and Play: next step %s, want 1", next)
	}
	// the class ends other than by the teacher's page (its time ran out,
	// or another client of the teacher's ended it) and the other browser
	// starts one: the controls move with it
	r, err := chromedp.Call(l.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{l.s.URL}})
	if err != nil {
		t.Fatal(err)
	}
	var cookie string
	for _, c := range r.Cookies {
		if c.Name == "idemlab_teacher" {
			cookie = c.Name + "=" + c.Value
		}
	}
	l.s.must(http.StatusNoContent, "DELETE", l.prefix+"/class", "", "Cookie", cookie)
	other.waitJS(`document.querySelector("#class-state")?.dataset.class === "no"`, "the class's end in another browser")
	other.do(chromedp.Click(tid("share")), chromedp.Click(tid("class-start")))
	other.waitJS(shown("class-ask")+` && !`+shown("class-viewer"), "the class's controls in the browser that started the new class")
	l.waitJS(shown("class-viewer")+` && !`+shown("class-ask")+` && !`+shown("class-end"), "the first teacher's browser to say who steers the new class")
}
