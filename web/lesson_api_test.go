package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"idemlab/sim/lesson"
	"idemlab/views"
)

// A step is taken once, however often it is sent: two browsers pressing
// Step together, or a post retried after a lost answer, run it once.
func TestLessonStepIsTakenOnce(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	s.must(http.StatusOK, "POST", lab+"/lesson", `{"lesson":1}`)
	s.must(http.StatusOK, "POST", lab+"/lesson/setup", "")
	done := make(chan response, 8)
	for range 8 {
		go func() { done <- s.do("POST", lab+"/lesson/step", `{"at":0}`) }()
	}
	taken := 0
	for range 8 {
		r := <-done
		if r.Status != http.StatusOK {
			t.Fatalf("step: %d %s", r.Status, r.Body)
		}
		if r.JSON(t)["taken"] == true {
			taken++
		}
	}
	if taken != 1 {
		t.Errorf("%d of 8 copies say they took the step, want 1", taken)
	}
	got := s.must(http.StatusOK, "GET", lab+"/lesson", "").JSON(t)
	if got["next"] != float64(1) {
		t.Errorf("after 8 copies of step 0: next = %v, want 1", got["next"])
	}
	ops := s.must(http.StatusOK, "GET", lab+"/operations", "").JSON(t)
	if n := len(ops["operations"].([]any)); n != 1 {
		t.Errorf("%d operations, want 1", n)
	}
	if l := s.ledger(lab); l.Count != 1 {
		t.Errorf("%d charges after step 0 of lesson 1, want 1", l.Count)
	}
}

// Refused lesson requests say why and change nothing.
func TestLessonRefusals(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	for _, tc := range []struct {
		path, body string
		status     int
		field      string
	}{
		{"/lesson/step", `{"at":0}`, http.StatusBadRequest, "lesson"},                                   // no lesson open
		{"/lesson/setup", ``, http.StatusBadRequest, "lesson"},                                          // no lesson open
		{"/lesson", fmt.Sprintf(`{"lesson":%d}`, len(lesson.All())+1), http.StatusBadRequest, "lesson"}, // no such lesson
		{"/lesson", `{"lesson":-1}`, http.StatusBadRequest, "lesson"},                                   // no such lesson
		{"/lesson", `{}`, http.StatusBadRequest, "lesson"},                                              // missing
		{"/lesson", `{"lesson":"1"}`, http.StatusBadRequest, "lesson"},                                  // not a number
		{"/lesson", `{"lesson":1,"x":2}`, http.StatusBadRequest, "x"},                                   // unknown field
		{"/lesson/step", `{}`, http.StatusBadRequest, "at"},                                             // missing
		{"/lesson/step", `{"at":1.5}`, http.StatusBadRequest, "at"},                                     // not whole
	} {
		r := s.do("POST", lab+tc.path, tc.body)
		if r.Status != tc.status || !strings.Contains(string(r.Body), `"`+tc.field+`"`) {
			t.Errorf("POST %s %s: %d %s; want %d naming %q", tc.path, tc.body, r.Status, r.Body, tc.status, tc.field)
		}
	}
	s.must(http.StatusOK, "POST", lab+"/lesson", `{"lesson":2}`)
	r := s.do("POST", lab+"/lesson/step", `{"at":0}`)
	if why := views.English.RuleText(lesson.NotSetUp, ""); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), why) {
		t.Errorf("a step before set-up: %d %s; want 400 %q", r.Status, r.Body, why)
	}
	if l := s.ledger(lab); l.Count != 0 {
		t.Errorf("refused requests charged %d times", l.Count)
	}
	// The page's forms refuse with a notice in the page's language.
	p, _ := openPage(t, s, "")
	v := url.Values{"at": {"0"}}
	resp, body := p.post(p.path+"/lesson/step", v, true)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "Choose one of the lessons first") {
		t.Errorf("step form without a lesson: %d %s", resp.StatusCode, body)
	}
	for _, n := range []string{strconv.Itoa(len(lesson.All()) + 1), "-1", "one", ""} {
		resp, body := p.post(p.path+"/lesson", url.Values{"lesson": {n}}, true)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, fmt.Sprintf("the lessons are 1 to %d", len(lesson.All()))) {
			t.Errorf("lesson form with %q: %d %s", n, resp.StatusCode, body)
		}
	}
}

// A class's place in a lesson survives a restart of the server.
func TestLessonSurvivesRestart(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lab.db")
	a := startServer(t, withDB(db))
	lab := a.newLab("")
	a.must(http.StatusOK, "POST", lab+"/lesson", `{"lesson":2}`)
	a.must(http.StatusOK, "POST", lab+"/lesson/setup", "")
	a.must(http.StatusOK, "POST", lab+"/lesson/step", `{"at":0}`)
	a.Stop()
	b := startServer(t, withDB(db))
	if got := b.must(http.StatusOK, "GET", lab+"/lesson", "").JSON(t); got["lesson"] != float64(2) || got["ready"] != true || got["next"] != float64(1) {
		t.Fatalf("after a restart: %v, want lesson 2, ready, next 1", got)
	}
	got := b.must(http.StatusOK, "POST", lab+"/lesson/step", `{"at":1}`).JSON(t)
	if got["state"] != "met" {
		t.Errorf("lesson 2 finished after the restart: %v, want met", got)
	}
	// A reset keeps the lesson open but asks for a new set-up, and says so after a restart too.
	b.must(http.StatusNoContent, "POST", lab+"/reset", "")
	b.Stop()
	c := startServer(t, withDB(db))
	if got := c.must(http.StatusOK, "GET", lab+"/lesson", "").JSON(t); got["lesson"] != float64(2) || got["ready"] != false || got["next"] != float64(0) {
		t.Errorf("after a reset and a restart: %v, want lesson 2, not set up, next 0", got)
	}
}

// A lab with no lesson open is "idle", one of the four states README lists.
func TestLessonStateOfNoLesson(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	if st := s.must(http.StatusOK, "GET", lab+"/lesson", "").JSON(t)["state"]; st != lesson.Idle {
		t.Errorf("state %q with no lesson open, want %q", st, lesson.Idle)
	}
}
