package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A form's own answer carries the lab's regions as it read them; the stream
// may bring newer ones first. The answer held back in the page until a
// charge made elsewhere has reached the page over the stream must not take
// the page back to what it read: the page keeps the newest regions it has
// seen, and still takes the answer's notices.
func TestBrowserLateAnswerDoesNotGoBack(t *testing.T) {
	t.Parallel()
	l := openLab(t, "")
	// first a refused charge: its notice stands beside the form
	l.do(chromedp.SetValue(`#order-id`, "order 42!"), chromedp.Click(tid("fire-charge")))
	l.waitJS(`(`+jsTid("charge-notice")+`?.textContent ?? "").trim() !== ""`, "the refused charge's notice")
	eval[bool](l, `(window.heldAnswer = undefined, true)`)
	// then hold the charge form's answer, as a slow network on the way back would
	eval[bool](l, `(() => {
		const send = window.fetch;
		window.fetch = async function (url, opts) {
			const r = await send.apply(this, arguments);
			if (!String(url).endsWith("/charge") || (opts && opts.method) !== "POST") return r;
			const text = await r.text();
			window.heldAnswer = text;
			while (!window.releaseAnswer) await new Promise((ok) => setTimeout(ok, 20));
			return new Response(text, { status: r.status, statusText: r.statusText, headers: r.headers });
		};
		document.addEventListener("htmx:after:swap", (e) => {
			if (String(e.detail?.ctx?.request?.action ?? "").endsWith("/charge")) window.answerSwapped = true;
		});
		return true;
	})()`)
	l.do(chromedp.SetValue(`#order-id`, "order-42"), chromedp.Click(tid("fire-charge")))
	l.waitJS(`typeof window.heldAnswer === "string"`, "the charge form's answer, held")
	l.waitText("total-count", "1")
	if held := eval[string](l, `window.heldAnswer`); !strings.Contains(held, `data-testid="total-count">1<`) {
		t.Fatalf("the held answer does not show the first charge:\n%.400s", held)
	}
	// a second charge, straight to the API: the stream brings it
	l.s.must(http.StatusCreated, "POST", l.prefix+"/charges", `{"order_id":"order-7","amount":700}`)
	l.waitText("total-count", "2")
	eval[bool](l, `(window.releaseAnswer = true)`)
	l.waitJS(`window.answerSwapped === true`, "the held answer to be swapped")
	if !l.holds(`(`+jsTid("total-count")+`?.textContent ?? "").trim() === "2"`, time.Second) {
		t.Errorf("after the late answer the page shows %s charges; want 2, the newest it had", l.text("total-count"))
	}
	if got := l.text("charge-notice"); got != "" {
		t.Errorf("after the late answer the charge's notice says %q; want it cleared, as the answer says", got)
	}
	if n := l.count("payment-row"); n != 2 {
		t.Errorf("after the late answer the page lists %d payments; want 2", n)
	}
}
