package web_test

import (
	"net/http"
	"path"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// The class's QR code on the lab's page opens its join screen, for the
// projector: the QR code, the join address and the code, in the page's
// language, never the lab. A code that names no class, or a class that
// has ended, is a page that says so (404).
func TestClassJoinScreen(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	teacher, code := s.classOn(lab)
	id := path.Base(lab)
	screen := "/join/" + code + "/screen"
	page := parse(t, s.must(http.StatusOK, "GET", "/labs/"+id, "", "Cookie", teacher).Body)
	if href, _ := page.Find(`[data-testid="class-screen"]`).Attr("href"); href != screen {
		t.Errorf("the class's QR code links to %q, want %q", href, screen)
	}
	joinURL := text(page, "class-url")
	for _, lang := range []string{"en", "ru"} {
		r := s.must(http.StatusOK, "GET", screen+"?lang="+lang, "")
		doc := parse(t, r.Body)
		src, _ := doc.Find(`[data-testid="screen-qr"]`).Attr("src")
		if src != "/join/"+code+"/qr.svg" || text(doc, "class-code") != code || text(doc, "class-url") != joinURL {
			t.Errorf("%s: the screen shows QR %q, code %q, address %q; want the class's (%s, %s)",
				lang, src, text(doc, "class-code"), text(doc, "class-url"), code, joinURL)
		}
		if strings.Contains(string(r.Body), id) || r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: the screen names the lab (%v) or may be cached (%q)", lang, strings.Contains(string(r.Body), id), r.Header.Get("Cache-Control"))
		}
		if lang == "ru" {
			for _, w := range englishOn(doc, id) {
				if !strings.Contains(code, w) { // the code is letters to type, not words
					t.Errorf("the Russian screen shows %q", w)
				}
			}
		}
	}
	if r := s.do("GET", "/join/NOPE22/screen", ""); r.Status != http.StatusNotFound || !strings.Contains(string(r.Body), `data-testid="phone-gone"`) {
		t.Errorf("an unknown code's screen: %d\n%s", r.Status, r.Body)
	}
	s.must(http.StatusNoContent, "DELETE", lab+"/class", "", "Cookie", teacher)
	if r := s.do("GET", screen, ""); r.Status != http.StatusNotFound {
		t.Errorf("the screen of a class that ended: %d, want 404", r.Status)
	}
}

// parse reads an HTML page.
func parse(t *testing.T, body []byte) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
