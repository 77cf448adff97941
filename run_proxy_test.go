package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"idemlab/sim/logtest"
)

// -trust-proxy takes address ranges; a bad one stops the start, naming the
// flag and what it takes.
func TestTrustProxyFlagRefusesBadRanges(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"10.0.0.0/33", "proxy.local", "127.0.0.1/8;10.0.0.0/8"} {
		out := &logtest.Buffer{}
		err := run(context.Background(), []string{"idemlab", "-db", ":memory:", "-trust-proxy", bad}, func(string) string { return "" }, out)
		if err == nil || !strings.Contains(err.Error(), "-trust-proxy") || !strings.Contains(err.Error(), "CIDR") {
			t.Errorf("-trust-proxy %q: %v, want a refusal naming the flag and CIDR", bad, err)
		}
		if strings.Contains(out.String(), "listening") {
			t.Errorf("-trust-proxy %q: the lab started:\n%s", bad, out)
		}
	}
}

// Behind a proxy listed in -trust-proxy, each client has its own limits,
// told apart by the X-Forwarded-For the proxy sends; without the flag the
// header is the client's to write, and not read.
func TestTrustProxyFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args       []string
		separately bool
	}{{nil, false}, {[]string{"-trust-proxy", "127.0.0.0/8"}, true}} {
		base, stop := startLab(t, append([]string{"-db", ":memory:"}, tc.args...)...)
		status := 0
		for status != http.StatusTooManyRequests { // the first client takes its burst of new labs
			if status, _, _ = call(t, "POST", base+"/api/v1/labs", "", "X-Forwarded-For", "203.0.113.7"); status != http.StatusCreated && status != http.StatusTooManyRequests {
				t.Fatalf("a new lab: %d", status)
			}
		}
		status, _, body := call(t, "POST", base+"/api/v1/labs", "", "X-Forwarded-For", "198.51.100.8")
		if got := status == http.StatusCreated; got != tc.separately {
			t.Errorf("%v: a second client's new lab: %d %s", tc.args, status, body)
		}
		if err := stop(); err != nil {
			t.Errorf("run: %v", err)
		}
	}
}
