package web_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

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
	b := a.twin("")
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
