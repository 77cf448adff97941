package web_test

import (
	"bufio"
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A change reaches the pages of a lab open in two languages from one read
// of the lab: both streams' regions carry the same read mark, each in its
// own language.
func TestLiveUpdateReadsOnceForEveryLanguage(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	api := s.newLab("")
	en, ru := liveStream(t, s, api, "en"), liveStream(t, s, api, "ru")
	_, _ = en(), ru() // each page's first message: the lab as it stands
	s.operation(api, `{"order_id":"order-42","amount":1500}`)
	// a slow stream keeps only the newest update, so the two may see
	// different updates of the charge; the last reaches both
	mark := regexp.MustCompile(`id="lab-read" data-read="(\d+)"`)
	type seen struct{ lang, mark, msg string }
	marks := make(chan seen)
	for lang, next := range map[string]func() string{"en": en, "ru": ru} {
		go func() {
			for m := next(); m != ""; m = next() {
				if strings.Contains(m, `data-testid="total-count">1<`) {
					if g := mark.FindStringSubmatch(m); g != nil {
						select {
						case marks <- seen{lang, g[1], m}:
						case <-t.Context().Done():
						}
					}
				}
			}
		}()
	}
	got := map[string]map[string]string{"en": {}, "ru": {}} // language → mark → message
	for {
		select {
		case sn := <-marks:
			got[sn.lang][sn.mark] = sn.msg
			if other := got[map[string]string{"en": "ru", "ru": "en"}[sn.lang]]; other[sn.mark] != "" {
				me, mr := got["en"][sn.mark], got["ru"][sn.mark]
				if !strings.Contains(me, "Payments, newest first") || !strings.Contains(mr, "Платежи, новые сверху") {
					t.Errorf("an update not in its page's language:\nen: %.300s\nru: %.300s", me, mr)
				}
				return
			}
		case <-time.After(streamWithin):
			t.Fatalf("no update of the charge reached both languages from one read: marks %v", got)
		}
	}
}

// streamWithin bounds a test's reading of a live stream.
const streamWithin = 10 * time.Second

// liveStream opens the live stream of the lab (its API prefix) in a
// language, for streamWithin at most; the function it returns reads the
// stream's next message (its data lines), "" once the stream has ended.
func liveStream(t *testing.T, s *testServer, api, lang string) func() string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), streamWithin)
	t.Cleanup(cancel)
	id := strings.TrimPrefix(api, "/api/v1/labs/")
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/labs/"+id+"/events?hl="+lang, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("stream %s: %d, content type %q", lang, resp.StatusCode, ct)
	}
	r := bufio.NewReader(resp.Body)
	return func() string {
		var b strings.Builder
		for {
			line, err := r.ReadString('\n')
			if err != nil { // "" when ctx has ended
				if ctx.Err() == nil {
					t.Errorf("stream %s: %v (so far %.200q)", lang, err, b.String())
				}
				return ""
			}
			if line == "\n" && b.Len() > 0 {
				return b.String()
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				b.WriteString(d)
			}
		}
	}
}
