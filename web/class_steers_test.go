package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// Only the teacher's page shows the class's controls: its page, and the
// answers to its forms, mark it (views.SteersMark); the live update that
// every page of the lab gets never does. A browser's first class is marked
// by the answer that sets its cookie.
func TestClassControlsOnTheTeachersPage(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	teacher, _ := s.classOn(lab)
	s.lessonAt(lab, 1, "", 0)
	pagePath := "/labs/" + strings.TrimPrefix(lab, "/api/v1/labs/")
	steers := func(r response, sel string) string {
		return parse(t, r.Body).Find(sel).AttrOr("data-steers", "(absent)")
	}
	for _, tc := range []struct{ who, cookie, want string }{
		{"the teacher", teacher, "yes"}, {"another browser", "idemlab_teacher=someone-else", "no"}, {"a browser without a cookie", "", "no"},
	} {
		if got := steers(s.must(http.StatusOK, "GET", pagePath, "", "Cookie", tc.cookie), "#class-steers"); got != tc.want {
			t.Errorf("the page for %s: data-steers %s, want %s", tc.who, got, tc.want)
		}
	}
	form := func(path, body, cookie string) response {
		return s.do("POST", pagePath+path, body, formHeaders("HX-Request", "true", "Cookie", cookie)...)
	}
	const mark = `hx-partial[hx-target="#class-steers"] #class-steers`
	if r := form("/class/ask", "", teacher); r.Status != http.StatusOK || steers(r, mark) != "yes" {
		t.Errorf("the teacher's form answer: %d, data-steers %s; want 200, yes\n%s", r.Status, steers(r, mark), r.Body)
	}
	if r := form("/charge", "order_id=order-9&amount=1500", ""); r.Status != http.StatusOK || steers(r, mark) != "no" {
		t.Errorf("another browser's form answer: %d, data-steers %s; want 200, no\n%s", r.Status, steers(r, mark), r.Body)
	}
	// a browser's first class: the answer that sets its cookie marks it
	first := s.newLab("")
	r := s.do("POST", "/labs/"+strings.TrimPrefix(first, "/api/v1/labs/")+"/class", "", "HX-Request", "true")
	if r.Status != http.StatusOK || steers(r, mark) != "yes" || !strings.Contains(r.Header.Get("Set-Cookie"), "idemlab_teacher=") {
		t.Errorf("a first class started from the page: %d, data-steers %s, Set-Cookie %q; want 200, yes, the teacher's cookie",
			r.Status, steers(r, mark), r.Header.Get("Set-Cookie"))
	}
}
