package web_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// The page links its styles and scripts by addresses that carry their
// content's hash; there they are cached for a year; everywhere a
// conditional GET with their ETag is answered 304; they go gzipped to a
// client that takes it. The page stays strict: no inline script, a
// Content-Security-Policy that allows none.
func TestStaticFilesCached(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	page := s.must(http.StatusOK, "GET", "/", "")
	csp := page.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(string(page.Body)))
	if n := doc.Find("script:not([src]), [style]").Length(); n != 0 {
		t.Errorf("%d inline scripts or styles on the page", n)
	}
	var links []string
	doc.Find(`link[rel=stylesheet], script[src]`).Each(func(_ int, e *goquery.Selection) {
		links = append(links, e.AttrOr("href", e.AttrOr("src", "")))
	})
	if len(links) != 9 {
		t.Fatalf("the page links %q, want 3 styles and 6 scripts", links)
	}
	seen := map[string]bool{}
	for _, link := range links {
		file, v, ok := strings.Cut(link, "?v=")
		if !ok || !strings.HasPrefix(file, "/static/") || len(v) < 8 {
			t.Errorf("%s: not a hashed /static/ address", link)
			continue
		}
		identity := s.must(http.StatusOK, "GET", link, "", "Accept-Encoding", "identity")
		sum := sha256.Sum256(identity.Body)
		if !strings.HasPrefix(hex.EncodeToString(sum[:]), v) {
			t.Errorf("%s: ?v= is not the start of the file's SHA-256 %x", link, sum)
		}
		if seen[v] {
			t.Errorf("%s: two files with one version", link)
		}
		seen[v] = true
		if got := identity.Header.Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", link, got)
		}
		etag := identity.Header.Get("ETag")
		if etag == "" || identity.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: ETag %q, Content-Encoding %q", link, etag, identity.Header.Get("Content-Encoding"))
		}
		if ct := identity.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/css") && !strings.HasPrefix(ct, "text/javascript") {
			t.Errorf("%s: Content-Type %q", link, ct)
		}
		again := s.do("GET", link, "", "Accept-Encoding", "identity", "If-None-Match", etag)
		if again.Status != http.StatusNotModified || len(again.Body) != 0 {
			t.Errorf("%s with If-None-Match: %d, %d bytes; want 304", link, again.Status, len(again.Body))
		}
		// Without the hash (an old page, a hand-typed address): revalidated.
		plain := s.must(http.StatusOK, "GET", file, "", "Accept-Encoding", "identity")
		if got := plain.Header.Get("Cache-Control"); got != "no-cache" || plain.Header.Get("ETag") != etag || !bytes.Equal(plain.Body, identity.Body) {
			t.Errorf("%s: Cache-Control %q, ETag %q", file, got, plain.Header.Get("ETag"))
		}
		s.must(http.StatusNotModified, "GET", file+"?v=0123456789ab", "", "Accept-Encoding", "identity", "If-None-Match", etag)
		// Gzipped, once, for those who take it.
		gz := s.must(http.StatusOK, "GET", link, "", "Accept-Encoding", "gzip, deflate, br")
		if gz.Header.Get("Content-Encoding") != "gzip" || gz.Header.Get("ETag") == etag {
			t.Errorf("%s gzipped: Content-Encoding %q, ETag %q (the plain one is %q)", link, gz.Header.Get("Content-Encoding"), gz.Header.Get("ETag"), etag)
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz.Body))
		if err != nil {
			t.Fatal(err)
		}
		unzipped, _ := io.ReadAll(zr)
		if !bytes.Equal(unzipped, identity.Body) {
			t.Errorf("%s: the gzipped file differs", link)
		}
		if !strings.Contains(strings.Join(gz.Header.Values("Vary"), ","), "Accept-Encoding") {
			t.Errorf("%s: Vary %q", link, gz.Header.Values("Vary"))
		}
		s.must(http.StatusNotModified, "GET", link, "", "Accept-Encoding", "gzip", "If-None-Match", gz.Header.Get("ETag"))
	}
	s.must(http.StatusNotFound, "GET", "/static/nothing.css", "")
	s.must(http.StatusNotFound, "GET", "/static/", "")
	if r := s.do("HEAD", links[0], "", "Accept-Encoding", "identity"); r.Status != http.StatusOK || r.Header.Get("ETag") == "" || len(r.Body) != 0 {
		t.Errorf("HEAD %s: %d, ETag %q, %d bytes", links[0], r.Status, r.Header.Get("ETag"), len(r.Body))
	}
}

// The API's answers carry the policies that mean something to a response
// no browser renders as a page: nothing allowed, nosniff, no framing; the
// pages' others (referrer, opener, permissions) are left to the pages.
func TestAPIAnswersCarryTheAPIsPolicy(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	prefix := s.newLab(`{"protection":"replay"}`)
	for _, r := range []response{
		s.must(http.StatusOK, "GET", prefix+"/settings", ""),
		s.must(http.StatusCreated, "POST", prefix+"/charges", `{"order_id":"o-1","amount":100}`, "Idempotency-Key", "k-1"),
		s.do("GET", "/api/v1/labs/AAAAAAAAAAAAAAAAAAAAAA/settings", ""),
	} {
		if got := r.Header.Get("Content-Security-Policy"); got != "default-src 'none'; frame-ancestors 'none'" {
			t.Errorf("%d %s: Content-Security-Policy %q, want the API's", r.Status, r.Header.Get("Content-Type"), got)
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("X-Frame-Options") != "DENY" || r.Header.Get("Referrer-Policy") != "" {
			t.Errorf("%d: headers %v", r.Status, r.Header)
		}
	}
}
