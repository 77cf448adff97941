package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"idemlab/sim"
)

// response is an HTTP answer, read whole.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map, failing the test if it is not JSON.
func (r response) JSON(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		tb.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// do sends one request. body is sent as is; a JSON content type is set when
// there is a body, unless headers say otherwise (pairs of name, value).
func (s *testServer) do(method, path, body string, headers ...string) response {
	s.tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		s.tb.Fatalf("new request: %v", err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.tb.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// must sends a request and fails the test unless the answer has the status.
func (s *testServer) must(status int, method, path, body string, headers ...string) response {
	s.tb.Helper()
	r := s.do(method, path, body, headers...)
	if r.Status != status {
		s.tb.Fatalf("%s %s: status %d, want %d\n%s", method, path, r.Status, status, r.Body)
	}
	return r
}

// newLab creates a private lab with the given settings patch (JSON, may be
// empty) and returns its API prefix, /api/v1/labs/{id}.
func (s *testServer) newLab(settings string) string {
	s.tb.Helper()
	r := s.must(http.StatusCreated, "POST", "/api/v1/labs", "")
	prefix := "/api/v1/labs/" + r.JSON(s.tb)["id"].(string)
	if settings != "" {
		s.must(http.StatusOK, "PATCH", prefix+"/settings", settings)
	}
	return prefix
}

// ledger is a lab's payments as the API reports them.
type ledger struct {
	Payments []sim.Payment `json:"payments"`
	Count    int64         `json:"count"`
	Total    int64         `json:"total"`
}

func (s *testServer) ledger(prefix string) ledger {
	s.tb.Helper()
	r := s.must(http.StatusOK, "GET", prefix+"/payments?limit=1000", "")
	var l ledger
	if err := json.Unmarshal(r.Body, &l); err != nil {
		s.tb.Fatalf("payments: %v", err)
	}
	return l
}

// operation starts an operation and returns it.
func (s *testServer) operation(prefix, body string) sim.Operation {
	s.tb.Helper()
	r := s.must(http.StatusCreated, "POST", prefix+"/operations", body)
	return decode[sim.Operation](s.tb, r.Body)
}

// retry makes one more attempt of an operation and returns it.
func (s *testServer) retry(prefix, opID, body string) sim.Operation {
	s.tb.Helper()
	r := s.must(http.StatusOK, "POST", prefix+"/operations/"+opID+"/retry", body)
	return decode[sim.Operation](s.tb, r.Body)
}

func decode[T any](tb testing.TB, b []byte) T {
	tb.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&v); err != nil {
		tb.Fatalf("decode %T: %v\n%s", v, err, b)
	}
	return v
}
