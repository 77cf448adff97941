package web_test

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"
	"sync"
	"testing"

	"idemlab/sim"
)

// problemBody is an RFC 9457 answer as the API sends it.
type problemBody struct {
	Type   string           `json:"type"`
	Title  string           `json:"title"`
	Status int              `json:"status"`
	Detail string           `json:"detail"`
	Errors []sim.FieldError `json:"errors"`
}

// checkProblem asserts that r is the problem+json answer of the given status
// and type, naming field (when not "") in its errors, and returns it.
func checkProblem(t testing.TB, r response, status int, typ, field string) problemBody {
	t.Helper()
	if r.Status != status {
		t.Errorf("status %d, want %d\n%s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		mt, _, _ := mime.ParseMediaType(ct)
		if mt != "application/problem+json" {
			t.Errorf("Content-Type %q, want application/problem+json", ct)
		}
	}
	var p problemBody
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("problem body is not JSON: %v\n%s", err, r.Body)
	}
	if !strings.HasPrefix(p.Type, "/problems/") {
		t.Errorf("type %q is not a /problems/ path", p.Type)
	}
	if p.Type != typ {
		t.Errorf("type %q, want %q (%s)", p.Type, typ, r.Body)
	}
	if p.Status != r.Status {
		t.Errorf("body status %d, HTTP status %d", p.Status, r.Status)
	}
	if p.Title == "" {
		t.Errorf("problem without a title: %s", r.Body)
	}
	// Internals never leak into an answer: Go type names, decoder or
	// database messages.
	for _, leak := range []string{"sim.", "json:", "sqlite", "SQL", "struct", "int64", "goroutine"} {
		if strings.Contains(string(r.Body), leak) {
			t.Errorf("the problem leaks %q: %s", leak, r.Body)
		}
	}
	if field != "" {
		found := false
		for _, fe := range p.Errors {
			if fe.Field == field && fe.Detail != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("errors %+v do not name field %q", p.Errors, field)
		}
	}
	return p
}

// problemPages checks that every problem type answers with an HTML page,
// fetching each once.
type problemPages struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (pp *problemPages) check(t testing.TB, s *testServer, typ string) {
	t.Helper()
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.seen == nil {
		pp.seen = map[string]bool{}
	}
	if pp.seen[typ] || !strings.HasPrefix(typ, "/") {
		return
	}
	pp.seen[typ] = true
	r := s.do("GET", typ, "")
	if r.Status != http.StatusOK {
		t.Errorf("GET %s: status %d, want 200", typ, r.Status)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "text/html" {
		t.Errorf("GET %s: Content-Type %q, want text/html", typ, r.Header.Get("Content-Type"))
	}
	if !strings.Contains(strings.ToLower(string(r.Body)), "<html") {
		t.Errorf("GET %s: not an HTML page:\n%.300s", typ, r.Body)
	}
}
