package web

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim/labs"
)

// The client's address: the one thing every limit per client (the rates,
// the fair shares) counts by. It is the connection's, unless the
// connection comes from a reverse proxy the operator listed
// (-trust-proxy): then it is the proxy's word on who its client is.

// Proxies are the reverse proxies whose word on the client's address is
// believed (-trust-proxy): address ranges, empty for none.
type Proxies []netip.Prefix

// ParseProxies reads -trust-proxy: address ranges in CIDR notation
// (10.0.0.0/8, 2001:db8::/32) or single addresses, separated by commas.
func ParseProxies(s string) (Proxies, error) {
	var out Proxies
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			a, aerr := netip.ParseAddr(part)
			if aerr != nil || a.Zone() != "" {
				return nil, fmt.Errorf("%q is neither an address range in CIDR notation (10.0.0.0/8, 2001:db8::/32) nor an address", part)
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// String lists the ranges as -trust-proxy takes them.
func (ps Proxies) String() string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// trusts reports whether a is a listed proxy.
func (ps Proxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// extractor is Echo's IPExtractor: the connection's address, or, when the
// connection is a listed proxy's, the right-most address its forwarding
// headers name that is not itself a listed proxy. Each proxy appends the
// address it got the request from; what is left of that was written by the
// client, who may write anything. When Forwarded and X-Forwarded-For both
// come and name different clients, neither is believed, and the client is
// the proxy: a header the proxy passed on unread cannot give a client an
// address of its choosing.
func (ps Proxies) extractor() echo.IPExtractor {
	return func(r *http.Request) string {
		peer, ok := addrOf(r.RemoteAddr)
		if !ok {
			return r.RemoteAddr
		}
		if !ps.trusts(peer) {
			return peer.String()
		}
		xff := strings.Join(r.Header.Values("X-Forwarded-For"), ",")
		fwd := forwardedFor(r.Header.Values("Forwarded"))
		a := ps.client(peer, strings.Split(xff, ","))
		if len(fwd) > 0 {
			b := ps.client(peer, fwd)
			if xff != "" && a != b {
				return peer.String()
			}
			a = b
		}
		return a.String()
	}
}

// client walks the hops from the right while each hop's writer is a listed
// proxy, and returns the last address it reached: a hop it cannot read
// (unknown, an obfuscated name) stops it at the proxy that wrote it.
func (ps Proxies) client(peer netip.Addr, hops []string) netip.Addr {
	at := peer
	for i := len(hops) - 1; i >= 0 && ps.trusts(at); i-- {
		hop := strings.TrimSpace(hops[i])
		if hop == "" && len(hops) == 1 {
			break // no header at all
		}
		a, ok := hopAddr(hop)
		if !ok {
			break
		}
		at = a
	}
	return at
}

// forwardedFor is the for= of each element of Forwarded headers (RFC 7239),
// in order; an element without one counts as a hop that cannot be read.
func forwardedFor(values []string) []string {
	var out []string
	for _, v := range values {
		for _, elem := range splitQuoted(v, ',') {
			hop := "unknown"
			for _, pair := range splitQuoted(elem, ';') {
				name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(strings.TrimSpace(name), "for") {
					hop = strings.Trim(strings.TrimSpace(value), `"`)
				}
			}
			out = append(out, hop)
		}
	}
	return out
}

// splitQuoted splits s at sep outside double quotes.
func splitQuoted(s string, sep byte) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case sep:
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// hopAddr reads one hop: an address, with or without a port, an IPv6 one
// in brackets when it has a port.
func hopAddr(hop string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(hop); err == nil && a.Zone() == "" {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(hop); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), true
	}
	if strings.HasPrefix(hop, "[") && strings.HasSuffix(hop, "]") { // RFC 7239: "[2001:db8::1]"
		return hopAddr(hop[1 : len(hop)-1])
	}
	return netip.Addr{}, false
}

// addrOf is the address of a connection's host:port.
func addrOf(hostport string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// withClient puts the request's client address (clientKey of RealIP) in
// its context, for the fair shares counted below the web layer. The
// protected endpoint goes without: a charge makes no lab and holds no
// simulated request, and it is the lab's hot path (the address and the
// request's copy are a few allocations each time).
func withClient(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Path() == api.RouteCharges {
			return next(c)
		}
		r := c.Request()
		c.SetRequest(r.WithContext(labs.WithClient(r.Context(), clientKey(c.RealIP()))))
		return next(c)
	}
}

// clientOf is the request's client address, as withClient put it.
func clientOf(c echo.Context) string {
	if a := labs.ClientOf(c.Request().Context()); a != "" {
		return a
	}
	return clientKey(c.RealIP())
}
