package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// floorHeaders are the no-op server's answer's headers, made once.
var floorHeaders = http.Header{"Content-Type": {"application/json"}, "Idempotent-Replayed": {"true"}}

// BenchmarkHTTPFloor is BenchmarkChargeReplayed's request, by the same
// client, to a no-op net/http server that reads the body and answers 201:
// what net/http costs, client and server. A charge's own allocations are
// the rest of BenchmarkCharge's and BenchmarkChargeReplayed's, measured in
// the same run (docs/load.md §8).
func BenchmarkHTTPFloor(b *testing.B) {
	noop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h := w.Header()
		for k, v := range floorHeaders {
			h[k] = v
		}
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{}`))
	}))
	defer noop.Close()
	c := &chargeClient{b: b, s: &testServer{client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}},
		url: noop.URL + "/charges", ctx: context.Background()}
	c.charge(http.StatusCreated, "once", true)
	b.ReportAllocs()
	for b.Loop() {
		c.charge(http.StatusCreated, "once", true)
	}
}
