package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// A preset of the storm panel plays one of lesson 15's stories through
// the page's form: the story's settings, then its two storms run to their
// ends, drawn side by side; the lab's lesson is left alone. "keys": a
// fifth of the answers lost, without keys some orders charged twice, with
// keys under UNIQUE none.
func TestStormPresetPlaysAStory(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	p, _ := openPage(t, s, "")
	p.submit(p.path+"/storm/preset", "story", "keys")
	doc := p.get()
	runs := doc.Find(`[data-testid="storm-run"]`)
	if runs.Length() != 2 || doc.Find(`[data-testid="storm"]`).AttrOr("data-running", "") != "no" {
		t.Fatalf("after the preset: %d storms drawn, running %q; want 2, done", runs.Length(), doc.Find(`[data-testid="storm"]`).AttrOr("data-running", ""))
	}
	var sums []string
	var doubles []int
	runs.Each(func(_ int, r *goquery.Selection) {
		sum := r.Find(`[data-testid="storm-summary"]`).Text()
		sums = append(sums, sum)
		if m := regexp.MustCompile(`; (\d+) double charges?\.`).FindStringSubmatch(sum); m != nil {
			n, _ := strconv.Atoi(m[1])
			doubles = append(doubles, n)
		}
	})
	if len(doubles) != 2 || doubles[0] == 0 || doubles[1] != 0 {
		t.Errorf("the storms' sums %q; want double charges in the first (no keys), none in the second", sums)
	}
	api := "/api/v1/labs/" + p.path[strings.LastIndex(p.path, "/")+1:]
	if got := s.must(http.StatusOK, "GET", api+"/settings", "").JSON(t); got["protection"] != "unique" {
		t.Errorf("the preset's protection %v, want unique", got["protection"])
	}
	if resp, body := p.post(p.path+"/storm/preset", url.Values{"story": {"nope"}}, true); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "herd, budget, keys") {
		t.Errorf("an unknown story: %d %s; want 422 naming the stories", resp.StatusCode, body)
	}
}
