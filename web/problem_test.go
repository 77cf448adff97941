package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/views"
)

// errorServer answers every request with err, through the lab's error
// handler; logged collects what it logs.
func errorServer(err error, logged *[]error) *echo.Echo {
	e := echo.New()
	e.HTTPErrorHandler = handleError(func(_ echo.Context, err error) { *logged = append(*logged, err) })
	e.Any("/x", func(echo.Context) error { return err })
	return e
}

// The engine's refusals map to their problems: 403 forbidden, and 503
// server-busy with Retry-After (whole seconds, rounded up, at least 1) and
// the limit named.
func TestEngineRefusalsMapToProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		typ        string
		retryAfter string
		limit      string
	}{
		{"forbidden", sim.Errorf(sim.EForbidden, "demo-delete", "demo"), 403, "/problems/forbidden", "", ""},
		{"max-labs", sim.Busy("max-labs", 1500*time.Millisecond, "max-labs", 10, "1h"), 503, "/problems/server-busy", "2", "max-labs"},
		{"max-inflight, no wait given", sim.Busy("max-inflight", 0, "max-inflight", 512), 503, "/problems/server-busy", "1", "max-inflight"},
		{"max-streams", sim.Busy("max-streams", 10*time.Second, "max-streams", 1000), 503, "/problems/server-busy", "10", "max-streams"},
		{"wrapped", fmt.Errorf("engine: create lab: %w", sim.Busy("max-labs", 3*time.Second, "max-labs", 10, "1h")), 503, "/problems/server-busy", "3", "max-labs"},
		{"in flight", &sim.Error{Code: sim.EInFlight, Key: "in-flight", Args: []any{"k"}, RetryAfter: 200 * time.Millisecond}, 409, "/problems/request-in-flight", "1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged []error
			rec := httptest.NewRecorder()
			errorServer(tc.err, &logged).ServeHTTP(rec, httptest.NewRequest("POST", "/x", nil))
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d", rec.Code, tc.status)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type %q", ct)
			}
			if got := rec.Header().Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
			}
			var p map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatalf("body: %v\n%s", err, rec.Body)
			}
			if p["type"] != tc.typ || p["status"] != float64(tc.status) {
				t.Errorf("type %v, status %v; want %s, %d", p["type"], p["status"], tc.typ, tc.status)
			}
			if got, _ := p["limit"].(string); got != tc.limit {
				t.Errorf("limit %q, want %q", got, tc.limit)
			}
			if len(logged) != 0 {
				t.Errorf("a refusal was logged as a failure: %v", logged)
			}
		})
	}
	var logged []error
	rec := httptest.NewRecorder()
	errorServer(errors.New("disk on fire"), &logged).ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != 500 || len(logged) != 1 {
		t.Errorf("an internal error: %d, logged %v; want 500, logged once", rec.Code, logged)
	}
}

// clip keeps 200 characters at most, counting characters, not bytes.
func TestClip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int // characters
		cut  bool
	}{
		{"", 0, false},
		{strings.Repeat("a", 200), 200, false},
		{strings.Repeat("a", 201), 200, true},
		{strings.Repeat("я", 200), 200, false},
		{strings.Repeat("я", 201), 200, true},
		{strings.Repeat("\xff", 300), 200, true},
	} {
		got := clip(tc.in)
		if n := utf8.RuneCountInString(got); n > tc.want || (!tc.cut && got != tc.in) {
			t.Errorf("clip(%d bytes) = %d characters %q", len(tc.in), n, got)
		}
		if cut := strings.HasSuffix(got, "…") && got != tc.in; cut != tc.cut {
			t.Errorf("clip(%d bytes): cut %v, want %v", len(tc.in), cut, tc.cut)
		}
		if tc.cut && !utf8.ValidString(got) {
			t.Errorf("clip(%d bytes) is not UTF-8", len(tc.in))
		}
	}
}

// A busy server answers a browser with a page too: 503 and Retry-After, as
// the JSON has them.
func TestBusyPage(t *testing.T) {
	t.Parallel()
	var logged []error
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/x", nil)
	req.Header.Set("Accept", "text/html,*/*;q=0.8")
	req.Header.Set("Accept-Language", "ru")
	errorServer(sim.Busy("max-labs", 4*time.Second, "Full."), &logged).ServeHTTP(rec, req)
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "4" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("%d, Retry-After %q, %q", rec.Code, rec.Header().Get("Retry-After"), rec.Header().Get("Content-Type"))
	}
	for _, want := range []string{`lang="ru"`, "Сервер занят", "Повторите через 4 секунды.", `href="/problems/server-busy"`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("the page does not say %q:\n%s", want, rec.Body)
		}
	}
}

// Every problem type has its lead on the error pages, and its title and
// explanation on its own page, in both languages.
func TestEveryProblemHasALead(t *testing.T) {
	t.Parallel()
	keys := views.Keys()
	for _, p := range api.ProblemTypes() {
		for _, k := range []string{"error.lead." + p.Slug, "problem." + p.Slug + ".title", "problem." + p.Slug + ".explain"} {
			if m, ok := keys[k]; !ok || m[0] == "" || m[1] == "" {
				t.Errorf("no %s: %q", k, m)
			}
		}
	}
}

// A client that hangs up is not a fault of the server: nothing is logged as
// a failure, and no answer is written.
func TestHangUpIsNotAFailure(t *testing.T) {
	t.Parallel()
	var logged []error
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/x", nil).WithContext(ctx)
	errorServer(fmt.Errorf("ledger: totals of demo: %w", context.Canceled), &logged).ServeHTTP(rec, req)
	if len(logged) != 0 {
		t.Errorf("a hang-up was logged: %v", logged)
	}
	var other []error
	errorServer(fmt.Errorf("ledger: totals of demo: %w", context.Canceled), &other).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/x", nil))
	if len(other) != 1 {
		t.Errorf("a cancellation while the client still waits was not logged: %v", other)
	}
}

// A database that does not answer is a 503 naming it, with Retry-After,
// on any endpoint, not a 500 logged as the lab's fault; a mistake in the
// lab's SQL stays a 500.
func TestDatabaseDownIsNotAFault(t *testing.T) {
	t.Parallel()
	var logged []error
	rec := httptest.NewRecorder()
	down := fmt.Errorf("ledger: payments of demo: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"})
	errorServer(down, &logged).ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "/problems/database-unavailable") {
		t.Errorf("the database shutting down: %d (Retry-After %q) %s; want 503 naming the database", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if len(logged) != 0 {
		t.Errorf("logged as a fault: %v", logged)
	}
	rec = httptest.NewRecorder()
	errorServer(fmt.Errorf("ledger: %w", &pgconn.PgError{Code: "42601", Message: "syntax error"}), &logged).ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != http.StatusInternalServerError || len(logged) != 1 {
		t.Errorf("a syntax error: %d, %d logged; want 500, logged", rec.Code, len(logged))
	}
}
