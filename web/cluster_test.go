package web_test

import (
	"fmt"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"idemlab/sim"
	"idemlab/sim/lesson"
)

// twoProcesses starts two lab servers on one PostgreSQL database, as two
// processes behind one address run; without PostgreSQL the test skips, or
// fails under CI=true.
func twoProcesses(t *testing.T, opts ...func(*serverOpts)) (a, b *testServer) {
	t.Helper()
	db := withPostgres(t)
	a = startServer(t, append([]func(*serverOpts){db}, opts...)...)
	b = startServer(t, append([]func(*serverOpts){db}, opts...)...)
	return a, b
}

// A storm of 500 requests with one key, dealt over two processes: the key
// holds across them (its constraint lives in the database), exactly one
// payment under every protection that promises it.
func TestStormOverTwoProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("storm skipped in -short mode")
	}
	a, b := twoProcesses(t)
	for _, protection := range []string{"unique", "on-conflict", "replay"} {
		t.Run(protection, func(t *testing.T) {
			lab := a.newLab(fmt.Sprintf(`{"protection":%q}`, protection))
			statuses := stormOver(t, []*testServer{a, b}, lab, 500, "storm-key-1")
			for code, n := range statuses {
				if code >= 500 {
					t.Errorf("%d answers with status %d", n, code)
				}
			}
			if statuses[http.StatusCreated] < 1 {
				t.Errorf("statuses %v: no request charged", statuses)
			}
			for _, s := range []*testServer{a, b} {
				if l := s.ledger(lab); l.Count != 1 || l.Total != 1500 {
					t.Errorf("after the storm, seen from %s: %d charges, %d ₽; want 1, 1500 (statuses %v)", s.URL, l.Count, l.Total, statuses)
				}
			}
		})
	}
}

// What one process does, the other hears at once: a charge made through A
// is an event in B; settings changed through A are B's the next moment;
// a reset through A empties B's memory of finished keys, so that B charges
// the key again instead of replaying a payment that is gone.
func TestLiveAcrossProcesses(t *testing.T) {
	t.Parallel()
	a, b := twoProcesses(t)
	lab := a.newLab(`{"protection":"replay"}`)
	id := strings.TrimPrefix(lab, "/api/v1/labs/")
	heard := make(chan sim.Event, 64)
	sub := b.House.Bus.Subscribe(256)
	t.Cleanup(sub.Close)
	go func() {
		for ev := range sub.Events() {
			if ev.Lab == id {
				select {
				case heard <- ev:
				default:
				}
			}
		}
	}()
	body := `{"order_id":"order-42","amount":1500}`
	a.must(http.StatusCreated, "POST", lab+"/charges", body, "Idempotency-Key", "k1")
	waitEvent(t, heard, sim.EventCharge)

	a.must(http.StatusOK, "PATCH", lab+"/settings", `{"protection":"unique","check_gap_ms":7}`)
	ev := waitEvent(t, heard, sim.EventSettings)
	if ev.Settings == nil || ev.Settings.Protection != sim.ProtectUnique {
		t.Errorf("B heard settings %+v, want protection unique", ev.Settings)
	}
	got := decode[sim.Settings](t, b.must(http.StatusOK, "GET", lab+"/settings", "").Body)
	if got.Protection != sim.ProtectUnique || got.CheckGapMS != 7 {
		t.Errorf("B's settings after A changed them: %s, gap %d; want unique, 7", got.Protection, got.CheckGapMS)
	}

	a.must(http.StatusOK, "PATCH", lab+"/settings", `{"protection":"replay"}`)
	waitEvent(t, heard, sim.EventSettings)
	b.must(http.StatusCreated, "POST", lab+"/charges", body, "Idempotency-Key", "k2")
	if r := b.do("POST", lab+"/charges", body, "Idempotency-Key", "k2"); r.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("B's second request with k2: %d, not a replay", r.Status)
	}
	a.must(http.StatusNoContent, "POST", lab+"/reset", "")
	waitEvent(t, heard, sim.EventReset)
	if r := b.do("POST", lab+"/charges", body, "Idempotency-Key", "k2"); r.Status != http.StatusCreated || r.Header.Get("Idempotent-Replayed") == "true" {
		t.Errorf("after A's reset, B answered k2 with %d (replayed %q); want a new charge, 201", r.Status, r.Header.Get("Idempotent-Replayed"))
	}
	if l := a.ledger(lab); l.Count != 1 {
		t.Errorf("after the reset and one charge: %d charges, want 1", l.Count)
	}

	a.must(http.StatusNoContent, "DELETE", lab, "")
	waitEvent(t, heard, sim.EventGone)
	if r := b.do("GET", lab+"/settings", ""); r.Status != http.StatusNotFound {
		t.Errorf("B's answer for the lab A removed: %d, want 404", r.Status)
	}
}

// waitEvent waits a few seconds for an event of the kind.
func waitEvent(t *testing.T, events <-chan sim.Event, kind sim.EventKind) sim.Event {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Kind == kind {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s event heard from the other process", kind)
			return sim.Event{}
		}
	}
}

// A page connected to process B shows, within a moment, a charge made
// through process A, and a setting changed there.
func TestBrowserLiveAcrossProcesses(t *testing.T) {
	t.Parallel()
	br := browser(t)
	a, b := twoProcesses(t)
	prefix := a.newLab("")
	l := &labTab{t: t, s: b, prefix: prefix, url: b.URL + "/labs/" + path.Base(prefix)}
	l.tab, l.ctx = newTab(t, br, chromedp.WithNewBrowserContext())
	l.navigate(l.url)
	start := time.Now()
	a.must(http.StatusCreated, "POST", prefix+"/charges", `{"order_id":"order-42","amount":1500}`)
	l.waitText("total-count", "1")
	t.Logf("the page on B showed the charge made through A after %s", time.Since(start).Round(time.Millisecond))
	a.must(http.StatusOK, "PATCH", prefix+"/settings", `{"protection":"unique"}`)
	l.waitJS(`document.querySelector('[data-testid="protection"]').value === "unique"`, "the page on B to show the protection set through A")
}

// A lesson played through two processes, as a page behind a balancer
// plays it: each step is taken once wherever it is asked (the same step
// asked of both at once: one takes it), and the lesson ends as the article
// says.
func TestLessonStepsAcrossProcesses(t *testing.T) {
	t.Parallel()
	a, b := twoProcesses(t)
	lab := a.newLab("")
	a.must(http.StatusOK, "POST", lab+"/lesson", `{"lesson":13}`)
	b.must(http.StatusOK, "POST", lab+"/lesson/setup", "")
	ls, err := lesson.Number(13)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ls.Steps {
		body := fmt.Sprintf(`{"at":%d}`, i)
		taken := make(chan bool, 2)
		for _, s := range []*testServer{a, b} {
			go func() {
				r := s.do("POST", lab+"/lesson/step", body)
				taken <- r.Status == http.StatusOK && strings.Contains(string(r.Body), `"taken":true`)
			}()
		}
		if n := btoi(<-taken) + btoi(<-taken); n != 1 {
			t.Fatalf("step %d asked of both processes at once: taken %d times, want once", i, n)
		}
	}
	got := b.must(http.StatusOK, "GET", lab+"/lesson", "").JSON(t)
	if got["state"] != "met" {
		t.Errorf("after the steps through both processes: %v, want met", got)
	}
	if l := a.ledger(lab); l.Count != ls.Expect.Charges || l.Total != ls.Expect.Total {
		t.Errorf("ledger %d charges, %d ₽; the article: %d, %d", l.Count, l.Total, ls.Expect.Charges, ls.Expect.Total)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A reset that another process hears late lets go of that process's
// memory only: the process that reset the lab emptied the shared Redis
// itself. Emptying it again would drop the keys taken since, and a retry
// of one would charge a second time.
func TestResetHeardLateKeepsNewKeys(t *testing.T) {
	t.Parallel()
	a, b := twoProcesses(t, withRealRedis(t))
	lab := a.newLab(`{"protection":"set-nx"}`)
	id := strings.TrimPrefix(lab, "/api/v1/labs/")
	a.must(http.StatusNoContent, "POST", lab+"/reset", "")
	if r := a.charge(lab, order42, "after-reset"); r.Status != http.StatusCreated {
		t.Fatalf("a charge after the reset: %d %s", r.Status, r.Body)
	}
	// B hears the reset only now, after the charge: as a cut listener or a
	// busy one would.
	b.House.Labs.Heard(t.Context(), sim.Event{Lab: id, Kind: sim.EventReset})
	if r := a.charge(lab, order42, "after-reset"); r.Status != http.StatusOK {
		t.Errorf("the retry after B heard the reset: %d %s; want 200 duplicate", r.Status, r.Body)
	}
	if l := a.ledger(lab); l.Count != 1 {
		t.Errorf("%d payments; want 1", l.Count)
	}
}
