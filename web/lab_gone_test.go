package web_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"idemlab/sim/labs"
	"idemlab/web"
)

// A lab with a page open on it is in use: however short -lab-idle, the
// janitor does not remove it while it is watched; closed, the lab idles
// out.
func TestWatchedLabIsNotIdle(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := startServer(t, withClock(clock), withLimits(labs.Config{LabIdle: 3 * time.Second, SweepEvery: time.Hour}, web.Options{}))
	lab := s.newLab("")
	ctx, cancel := context.WithCancel(context.Background())
	totals := s.follow(ctx, "/labs/"+labID(lab)+"/events")
	<-totals
	for range 3 {
		clock.Advance(time.Minute)
		if err := s.House.Labs.Janitor().Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	s.must(http.StatusOK, "GET", lab+"/settings", "")
	cancel() // the page closes
	waitFor(t, 10*time.Second, "the closed page's lab to idle out", func() bool {
		clock.Advance(time.Minute)
		if err := s.House.Labs.Janitor().Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s.do("GET", lab+"/settings", "").Status == http.StatusNotFound
	})
}

// A lab deleted under its open pages tells each of them in its own
// language, in the page's notice, and their streams end for good (a named
// event "gone", on which the page closes its stream) instead of going dead
// in silence.
func TestDeletedLabTellsItsPages(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open := func(lang string) <-chan string {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/labs/"+labID(lab)+"/events?hl="+lang, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a stream in %s: %d", lang, resp.StatusCode)
		}
		rest := make(chan string, 1)
		r := bufio.NewReader(resp.Body)
		if _, err := r.ReadString('\n'); err != nil { // the stream has begun
			t.Fatal(err)
		}
		go func() {
			defer resp.Body.Close()
			b, _ := io.ReadAll(r) // to the stream's end
			rest <- string(b)
		}()
		return rest
	}
	ru, en := open("ru"), open("en")
	s.must(http.StatusNoContent, "DELETE", lab, "")
	for _, tc := range []struct {
		lang   string
		stream <-chan string
		words  string
	}{{"ru", ru, "Эта лаборатория удалена"}, {"en", en, "This lab was deleted"}} {
		select {
		case got := <-tc.stream:
			notice, after, ok := strings.Cut(got, `data-testid="lab-gone"`)
			if !ok || !strings.Contains(after, tc.words) {
				t.Errorf("%s: the stream ended without the notice %q:\n%s", tc.lang, tc.words, got)
			}
			if !strings.Contains(after, "event: gone\n") || strings.Contains(notice+after, "[notice.") {
				t.Errorf("%s: the stream did not end with the event gone, or showed a key:\n%s", tc.lang, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the deleted lab's stream did not end", tc.lang)
		}
	}
}
