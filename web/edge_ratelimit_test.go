package web_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"idemlab/sim/labs"
	"idemlab/web"
)

// wantLimited checks a 429 of the named limit, whose Retry-After is the
// whole seconds to the next token: between lo and hi.
func wantLimited(t *testing.T, r response, limit string, lo, hi int) {
	t.Helper()
	checkProblem(t, r, http.StatusTooManyRequests, "/problems/rate-limited", "")
	if got := r.JSON(t)["limit"]; got != limit {
		t.Errorf("limit %v, want %s", got, limit)
	}
	n, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || n < lo || n > hi {
		t.Errorf("Retry-After %q, want %d to %d seconds", r.Header.Get("Retry-After"), lo, hi)
	}
}

// Creating labs, comparing and opening scenario links are limited per
// client address, each on its own, the page and the API alike; a forged
// X-Forwarded-For does not make another address; charges are not limited.
func TestRateLimitsPerAddress(t *testing.T) {
	t.Parallel()
	// The lab's clock stands still: the Retry-After each refusal gives is
	// the same however long a busy machine takes over the comparison.
	s := startServer(t, withClock(newFakeClock(time.Now())), withLimits(labs.Config{}, web.Options{
		LabRate:      web.Rate{Every: time.Hour, Burst: 2},
		CompareRate:  web.Rate{Every: time.Minute, Burst: 1},
		ScenarioRate: web.Rate{Every: 30 * time.Second, Burst: 2},
	})).from(t, "127.0.0.1")

	lab := s.newLab("")
	s.must(http.StatusSeeOther, "POST", "/labs", "", formHeaders()...) // the page's button: the same bucket
	for _, h := range [][]string{
		nil,
		{"X-Forwarded-For", "203.0.113.7"},
		{"X-Real-IP", "203.0.113.8"},
		{"X-Forwarded-For", "203.0.113.9, 127.0.0.1"},
	} {
		wantLimited(t, s.do("POST", "/api/v1/labs", "", h...), "lab-rate", 3590, 3600)
	}
	wantLimited(t, s.do("POST", "/labs", "", formHeaders()...), "lab-rate", 3590, 3600)

	s.must(http.StatusOK, "POST", "/api/v1/compare", "")
	wantLimited(t, s.do("POST", "/api/v1/compare", ""), "compare-rate", 50, 60)
	wantLimited(t, s.do("POST", "/compare", "", formHeaders()...), "compare-rate", 50, 60)

	s.operation(lab, `{"order_id":"order-1","amount":100}`)
	code := s.must(http.StatusOK, "GET", lab+"/scenario", "").JSON(t)["code"].(string)
	s.must(http.StatusSeeOther, "GET", "/s/"+code, "")
	s.must(http.StatusSeeOther, "HEAD", "/s/"+code, "") // HEAD rebuilds as GET does
	wantLimited(t, s.do("GET", "/s/"+code, ""), "scenario-rate", 25, 30)
	wantLimited(t, s.do("GET", "/s/garbage", ""), "scenario-rate", 25, 30)

	// The protected endpoint and the simulated client are never limited.
	for i := range 20 {
		s.must(http.StatusCreated, "POST", lab+"/charges", `{"order_id":"order-`+itoa(i)+`","amount":1}`)
	}
	for range 5 {
		s.operation(lab, `{"order_id":"order-x","amount":1,"fate":"response-lost"}`)
	}

	// Another address has buckets of its own.
	other := s.from(t, "127.0.0.2")
	other.must(http.StatusCreated, "POST", "/api/v1/labs", "")
	other.must(http.StatusOK, "POST", "/api/v1/compare", "")
	other.must(http.StatusSeeOther, "GET", "/s/"+code, "")
}

// The limits have defaults fit for a class behind one address: thirty
// new labs at once pass.
func TestRateLimitDefaults(t *testing.T) {
	t.Parallel()
	// The lab's clock stands still, so no token comes back while the
	// comparisons run, however long a busy machine makes them.
	s := startServer(t, withClock(newFakeClock(time.Now())))
	for range 30 {
		s.must(http.StatusCreated, "POST", "/api/v1/labs", "")
	}
	wantLimited(t, s.do("POST", "/api/v1/labs", ""), "lab-rate", 1, 2)
	for range 3 {
		s.must(http.StatusOK, "POST", "/api/v1/compare", "")
	}
	wantLimited(t, s.do("POST", "/api/v1/compare", ""), "compare-rate", 1, 10)
	off := startServerWith(t, web.Options{LabRate: web.Rate{Burst: -1}})
	for range 40 {
		off.must(http.StatusCreated, "POST", "/api/v1/labs", "")
	}
}
