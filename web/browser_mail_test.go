package web_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// Lesson 7 on the page, in both languages: the consumer crashes before its
// ack, the broker delivers again, and with no deduplication the page names
// the order that got two emails; the Mail and Queue panels show why.
func TestBrowserMailAndQueue(t *testing.T) {
	t.Parallel()
	for _, lang := range []string{"en", "ru"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			b := browser(t)
			s := startServer(t, withParts())
			prefix := s.newLab(`{"network":"ok","notify":"queue","consumer_dedup":"none","delivery":"crash-before-ack","ack_wait_ms":300,"language":"` + lang + `"}`)
			l := &labTab{t: t, s: s, prefix: prefix, url: s.URL + "/labs/" + prefix[len("/api/v1/labs/"):]}
			l.tab, l.ctx = newTab(t, b, chromedp.WithNewBrowserContext())
			l.do(chromedp.EmulateViewport(1440, 900))
			l.navigate(l.url + "?lang=" + lang)
			if got := eval[string](l, jsTid("notify")+".value"); got != "queue" {
				t.Fatalf("the notify select shows %q, want queue", got)
			}
			l.do(chromedp.Click(tid("fire-charge")))
			l.waitText("total-count", "1")
			l.waitText("email-count", "2")
			l.do(chromedp.WaitVisible(tid("duplicate-email-alert")))
			if got := l.text("duplicate-email-alert"); !contains(got, "order-42") {
				t.Errorf("the alert says %q; want it to name order-42", got)
			}
			for _, miss := range l.offScreen() {
				t.Errorf("%s: %s", lang, miss)
			}
			l.do(chromedp.Click(tid("tab-mailbox")))
			l.waitJS(`document.querySelectorAll('[data-testid="email-row"]').length === 2`, "two emails in the Mail panel")
			l.shoot(screenshotDir(t), fmt.Sprintf("lesson-7-mail-%s-1440x900.png", lang))
			l.do(chromedp.Click(tid("tab-queue")))
			l.waitJS(`document.querySelectorAll('[data-testid="message-row"]').length === 1 && /✗/.test(document.querySelector('[data-testid="queue"]').textContent)`, "the message's crash in the Queue panel")
			l.shoot(screenshotDir(t), fmt.Sprintf("lesson-7-queue-%s-1440x900.png", lang))
			// The consumer's deduplication, from the page: a second order gets one email.
			l.choose("consumer-dedup", "message-id")
			l.waitSettings(map[string]string{"consumer_dedup": "message-id"})
			l.do(chromedp.SetValue(tid("order-id"), "order-43"), chromedp.Click(tid("fire-charge")))
			l.waitText("total-count", "2")
			l.waitJS(`document.querySelectorAll('[data-testid="message-row"]').length === 2 && /↷/.test(document.querySelector('[data-testid="queue"]').textContent)`, "the redelivery skipped")
			if got := l.text("email-count"); got != "3" {
				t.Errorf("email-count %q after a second order under message-id dedup, want 3", got)
			}
		})
	}
}

// The methods from the page: the method select sends a PUT or a DELETE of
// the order through the same network as a charge; the button says what it
// sends, and the Orders panel shows the resource.
func TestBrowserMethods(t *testing.T) {
	t.Parallel()
	l := openLab(t, `{"network":"ok"}`, withParts())
	l.do(chromedp.EmulateViewport(1440, 900))
	l.navigate(l.url + "?lang=en")
	l.choose("method", "PUT")
	if got := l.text("fire-charge"); got != "Send PUT" {
		t.Errorf("with PUT chosen the button says %q, want Send PUT", got)
	}
	l.do(chromedp.Click(tid("fire-charge")))
	l.do(chromedp.Click(tid("tab-orders")))
	l.waitJS(`document.querySelectorAll('[data-testid="order-row"]').length === 1`, "the order in the Orders panel")
	l.shoot(screenshotDir(t), "orders-put-en-1440x900.png")
	l.choose("method", "DELETE")
	l.do(chromedp.Click(tid("fire-charge")))
	l.waitJS(`document.querySelectorAll('[data-testid="order-row"]').length === 0`, "the order gone from the Orders panel")
	if got := l.text("total-count"); got != "0" {
		t.Errorf("PUT and DELETE charged: total-count %q", got)
	}
}
