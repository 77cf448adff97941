package web

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// The client's address is the connection's, unless the connection is a
// listed proxy's: then the right-most hop of Forwarded or X-Forwarded-For
// that is not itself a listed proxy. Nothing else is trusted: not loopback,
// not private ranges, unless listed.
func TestClientAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		trust   string
		peer    string
		headers []string // name, value pairs
		want    string
	}{
		{"no proxy trusted: the connection", "", "10.0.0.5:4000", []string{"X-Forwarded-For", "203.0.113.7"}, "10.0.0.5"},
		{"loopback is not trusted unless listed", "10.0.0.0/8", "127.0.0.1:4000", []string{"X-Forwarded-For", "203.0.113.7"}, "127.0.0.1"},
		{"a listed proxy's client", "127.0.0.1/32", "127.0.0.1:4000", []string{"X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		{"a single address listed", "127.0.0.1", "127.0.0.1:4000", []string{"X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		{"the client's own hops are not believed", "127.0.0.1/32", "127.0.0.1:4000", []string{"X-Forwarded-For", "198.18.0.1, 203.0.113.7"}, "203.0.113.7"},
		{"header lines in order", "127.0.0.1/32", "127.0.0.1:4000", []string{"X-Forwarded-For", "198.18.0.1", "X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		{"a chain of listed proxies", "127.0.0.1/32,10.0.0.0/8", "127.0.0.1:4000", []string{"X-Forwarded-For", "198.18.0.1, 203.0.113.7, 10.1.2.3"}, "203.0.113.7"},
		{"a hop with a port", "127.0.0.1/32", "127.0.0.1:4000", []string{"X-Forwarded-For", "203.0.113.7:5123"}, "203.0.113.7"},
		{"no header: the proxy", "127.0.0.1/32", "127.0.0.1:4000", nil, "127.0.0.1"},
		{"a hop that is not an address: the proxy that wrote it", "127.0.0.1/32", "127.0.0.1:4000", []string{"X-Forwarded-For", "203.0.113.7, garbage"}, "127.0.0.1"},
		{"Forwarded", "127.0.0.1/32", "127.0.0.1:4000", []string{"Forwarded", `for=198.18.0.1, for=203.0.113.7;proto=https`}, "203.0.113.7"},
		{"Forwarded, IPv6 quoted with a port", "127.0.0.1/32", "127.0.0.1:4000", []string{"Forwarded", `For="[2001:db8:cafe::17]:4711"`}, "2001:db8:cafe::17"},
		{"Forwarded unknown: the proxy", "127.0.0.1/32", "127.0.0.1:4000", []string{"Forwarded", `for=unknown`}, "127.0.0.1"},
		{"Forwarded and X-Forwarded-For agree", "127.0.0.1/32", "127.0.0.1:4000", []string{"Forwarded", `for=203.0.113.7`, "X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		{"Forwarded and X-Forwarded-For differ: neither", "127.0.0.1/32", "127.0.0.1:4000", []string{"Forwarded", `for=198.18.0.1`, "X-Forwarded-For", "203.0.113.7"}, "127.0.0.1"},
		{"an IPv6 proxy", "::1/128", "[::1]:4000", []string{"X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		{"an IPv4-mapped peer", "127.0.0.0/8", "[::ffff:127.0.0.1]:4000", []string{"X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		{"X-Real-IP is never read", "127.0.0.1/32", "127.0.0.1:4000", []string{"X-Real-IP", "203.0.113.7"}, "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := ParseProxies(tc.trust)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			for i := 0; i+1 < len(tc.headers); i += 2 {
				r.Header.Add(tc.headers[i], tc.headers[i+1])
			}
			if got := ps.extractor()(r); got != tc.want {
				t.Errorf("client %q, want %q", got, tc.want)
			}
		})
	}
}

// -trust-proxy takes ranges and addresses; anything else is refused, saying
// what it takes.
func TestParseProxies(t *testing.T) {
	t.Parallel()
	ps, err := ParseProxies(" 10.0.0.0/8, 192.168.1.7 ,2001:db8::/32,::ffff:172.16.0.0/108")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ps.String(), "10.0.0.0/8,192.168.1.7/32,2001:db8::/32,172.16.0.0/12"; got != want {
		t.Errorf("parsed %q, want %q", got, want)
	}
	if ps, err := ParseProxies(""); err != nil || len(ps) != 0 {
		t.Errorf("empty: %v %v, want none", ps, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.local", "10.0.0.0/8,", "fe80::1%eth0", "10.0.0.0/8;127.0.0.1"} {
		_, err := ParseProxies(bad)
		if bad == "10.0.0.0/8," { // a trailing comma is harmless
			if err != nil {
				t.Errorf("%q: %v", bad, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "CIDR") {
			t.Errorf("%q: %v, want a refusal naming CIDR", bad, err)
		}
	}
}
