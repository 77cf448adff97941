package web_test

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"idemlab/sim/labs"
	"idemlab/web"
)

// startServerWith starts the lab as startServer does, with the server's
// options (its limits) given.
func startServerWith(tb testing.TB, opts web.Options) *testServer {
	tb.Helper()
	return startServer(tb, withLimits(labs.Config{}, opts))
}

// from is the server as seen from another client address of the loopback
// network (127.0.0.0/8 is all loopback on Linux).
func (s *testServer) from(tb testing.TB, addr string) *testServer {
	tb.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}}
	transport := &http.Transport{DialContext: d.DialContext}
	tb.Cleanup(transport.CloseIdleConnections)
	o := *s
	o.tb = tb
	o.client = &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &o
}

// formHeaders make s.do send its body as a form, with more headers after.
func formHeaders(more ...string) []string {
	return append([]string{"Content-Type", "", "Content-Type", "application/x-www-form-urlencoded"}, more...)
}

// apiOf is the API prefix of a page's lab.
func apiOf(p *page) string { return "/api/v1/labs/" + strings.TrimPrefix(p.path, "/labs/") }

// otherPort is the origin of base on another port: the same host, another
// origin, "same-site" to a browser.
func otherPort(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	port := "8081"
	if u.Port() == port {
		port = "8082"
	}
	return u.Scheme + "://" + u.Hostname() + ":" + port
}
