package web_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"idemlab/sim/class"
	"idemlab/sim/lesson"
	"idemlab/views"
)

// classOn starts a class on the lab (its API prefix) through the API and
// returns the teacher's cookie and the join code.
func (s *testServer) classOn(lab string) (teacher, code string) {
	s.tb.Helper()
	r := s.must(http.StatusCreated, "POST", lab+"/class", "")
	for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
		if ck.Name == "idemlab_teacher" {
			teacher = ck.Name + "=" + ck.Value
		}
	}
	got := r.JSON(s.tb)
	code, _ = got["code"].(string)
	if teacher == "" || len(code) != 6 || strings.ContainsAny(code, "0O1IL") {
		s.tb.Fatalf("start a class: cookie %q, code %q\n%s", teacher, code, r.Body)
	}
	if !strings.HasSuffix(got["join_url"].(string), "/join/"+code) || got["qr"] != "/join/"+code+"/qr.svg" {
		s.tb.Fatalf("start a class: %s", r.Body)
	}
	return teacher, code
}

// vote sends a voter's vote on question n; the voter is its cookie's value.
func (s *testServer) vote(code, voter string, n int, choice string) response {
	s.tb.Helper()
	return s.do("POST", "/join/"+code+"/votes", fmt.Sprintf(`{"question":%d,"choice":%q}`, n, choice), "Cookie", "idemlab_voter="+voter)
}

// lessonAt sets up lesson n in the lab, with a settings patch after the
// set-up (may be empty), and takes its steps before step at.
func (s *testServer) lessonAt(lab string, n int, patch string, at int) {
	s.tb.Helper()
	s.must(http.StatusOK, "POST", lab+"/lesson", fmt.Sprintf(`{"lesson":%d}`, n))
	s.must(http.StatusOK, "POST", lab+"/lesson/setup", "")
	if patch != "" {
		s.must(http.StatusOK, "PATCH", lab+"/settings", patch)
	}
	for i := range at {
		s.must(http.StatusOK, "POST", lab+"/lesson/step", fmt.Sprintf(`{"at":%d}`, i))
	}
}

// revealed asks the lesson's next step's question, has the votes cast
// (choice: how many voters), runs the step and returns the reveal.
func (s *testServer) revealed(lab, teacher, code string, votes map[string]int) map[string]any {
	s.tb.Helper()
	q := s.must(http.StatusOK, "POST", lab+"/class/questions", "", "Cookie", teacher).JSON(s.tb)
	n := int(q["n"].(float64))
	voter := 0
	for choice, k := range votes {
		for range k {
			voter++
			if r := s.vote(code, fmt.Sprintf("v%d", voter), n, choice); r.Status != http.StatusOK {
				s.tb.Fatalf("vote %s: %d %s", choice, r.Status, r.Body)
			}
		}
	}
	return s.must(http.StatusOK, "POST", lab+"/class/reveal", "", "Cookie", teacher).JSON(s.tb)
}

// C1: lesson 1's retry asked, 30 voters (20 say "2", 10 say "1"), the step
// run: "2" is right, and 67% predicted it.
func TestClassC1(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	teacher, code := s.classOn(lab)
	s.lessonAt(lab, 1, "", 1)
	got := s.revealed(lab, teacher, code, map[string]int{"2": 20, "1": 10})
	if got["state"] != "revealed" || got["right"] != "2" || got["share"] != float64(67) || got["votes"] != float64(30) {
		t.Errorf("revealed: %v; want right 2, share 67 of 30 votes", got)
	}
	dist := got["distribution"].(map[string]any)
	if dist["2"] != float64(20) || dist["1"] != float64(10) || dist["depends"] != float64(0) {
		t.Errorf("distribution %v", dist)
	}
	if l := s.ledger(lab); l.Count != 2 {
		t.Errorf("the reveal ran the step: %d charges, want 2", l.Count)
	}
}

// C2, and the mechanism deciding: lesson 2's retry under unique is "1";
// lesson 1's same retry is "2" as it stands (C1), and "1" once the lab
// runs under unique with a key: the ledger decides, not the lesson.
func TestClassRightChoiceFollowsTheLedger(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, tc := range []struct {
		lesson int
		patch  string
		want   string
	}{
		{2, "", "1"},
		{1, `{"protection":"unique","key_strategy":"uuid"}`, "1"},
		{1, `{"protection":"none","key_strategy":"none"}`, "2"},
	} {
		lab := s.newLab("")
		teacher, code := s.classOn(lab)
		s.lessonAt(lab, tc.lesson, tc.patch, 1)
		got := s.revealed(lab, teacher, code, map[string]int{"1": 1, "2": 1})
		if got["right"] != tc.want {
			t.Errorf("lesson %d's retry with %s: right %v, want %s (seen %v)", tc.lesson, tc.patch, got["right"], tc.want, got["seen"])
		}
	}
}

// C3: a vote after the reveal is 409, with an unknown code 404, a choice
// not offered 400; 300 voters at once, one address, are each counted once,
// and a changed vote moves.
func TestClassVotes(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	teacher, code := s.classOn(lab)
	s.lessonAt(lab, 1, "", 0)
	q := s.must(http.StatusOK, "POST", lab+"/class/questions", "", "Cookie", teacher).JSON(t)
	if q["n"] != float64(1) || q["state"] != "open" || q["distribution"] != nil {
		t.Fatalf("asked: %v", q)
	}
	var wg sync.WaitGroup
	for i := range 300 {
		wg.Go(func() {
			if r := s.vote(code, fmt.Sprintf("p%d", i), 1, []string{"0", "1", "2"}[i%3]); r.Status != http.StatusOK {
				t.Errorf("voter %d: %d %s", i, r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	s.must(http.StatusOK, "POST", "/join/"+code+"/votes", `{"question":1,"choice":"0"}`, "Cookie", "idemlab_voter=p1") // "1" → "0"
	for _, tc := range []struct {
		path, body string
		status     int
	}{
		{"/join/NOCODE/votes", `{"question":1,"choice":"1"}`, http.StatusNotFound},
		{"/join/" + code + "/votes", `{"question":1,"choice":"7"}`, http.StatusBadRequest},
		{"/join/" + code + "/votes", `{"choice":"1"}`, http.StatusBadRequest},
	} {
		if r := s.do("POST", tc.path, tc.body, "Cookie", "idemlab_voter=late"); r.Status != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.path, tc.body, r.Status, tc.status)
		}
	}
	got := s.must(http.StatusOK, "POST", lab+"/class/reveal", "", "Cookie", teacher).JSON(t)
	dist := got["distribution"].(map[string]any)
	if got["votes"] != float64(300) || dist["0"] != float64(101) || dist["1"] != float64(99) || dist["2"] != float64(100) {
		t.Errorf("after 300 voters and one change: %v votes, %v", got["votes"], dist)
	}
	if got["right"] != "1" || got["share"] != float64(33) {
		t.Errorf("step 0 of lesson 1 (the answer lost): right %v share %v, want 1 and 33", got["right"], got["share"])
	}
	if r := s.vote(code, "p0", 1, "1"); r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "vote-closed") {
		t.Errorf("a vote after the reveal: %d %s", r.Status, r.Body)
	}
	again := s.must(http.StatusOK, "POST", lab+"/class/reveal", "", "Cookie", teacher).JSON(t)
	if again["votes"] != float64(300) || s.ledger(lab).Count != 1 {
		t.Errorf("a second reveal: %v, %d charges; want the same, the step run once", again, s.ledger(lab).Count)
	}
}

// Only the browser that started the class steers it; a retried start is
// the same class; a phone never learns the lab.
func TestClassTeacherSteers(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	teacher, code := s.classOn(lab)
	if r := s.must(http.StatusOK, "POST", lab+"/class", "", "Cookie", teacher).JSON(t); r["code"] != code {
		t.Errorf("a retried start: code %v, want %s", r["code"], code)
	}
	s.lessonAt(lab, 1, "", 0)
	for _, tc := range []struct{ method, path string }{
		{"POST", lab + "/class"}, {"POST", lab + "/class/questions"}, {"POST", lab + "/class/reveal"},
	} {
		if r := s.do(tc.method, tc.path, "", "Cookie", "idemlab_teacher=someone-else"); r.Status != http.StatusForbidden {
			t.Errorf("%s %s by another browser: %d %s", tc.method, tc.path, r.Status, r.Body)
		}
	}
	s.must(http.StatusOK, "POST", lab+"/class/questions", "", "Cookie", teacher)
	page := s.must(http.StatusOK, "GET", "/join/"+strings.ToLower(code), "")
	id := strings.TrimPrefix(lab, "/api/v1/labs/")
	if strings.Contains(string(page.Body), id) || !strings.Contains(string(page.Body), `data-testid="phone-choice"`) {
		t.Errorf("the phone page names the lab, or shows no choices:\n%s", page.Body)
	}
	s.must(http.StatusNoContent, "DELETE", lab+"/class", "", "Cookie", teacher)
	if r := s.do("GET", "/join/"+code, ""); r.Status != http.StatusNotFound {
		t.Errorf("an ended class's page: %d", r.Status)
	}
}

// Every question of every lesson has a choice that its step makes right:
// each lesson is played through the class (asked, revealed) and the
// ledger, the answers and the emails decide; the choices have words in
// both languages. The storm lesson plays apart (TestStormLessonsApart).
func TestClassEveryLessonQuestionHasItsAnswer(t *testing.T) {
	t.Parallel()
	s := startServer(t, withParts())
	for _, ls := range slices.DeleteFunc(s.lessons(), stormy) {
		t.Run(fmt.Sprint(ls.N), func(t *testing.T) {
			t.Parallel()
			classLesson(t, s, ls)
		})
	}
}

// The storm lesson through the class, apart (stormLessons).
func classEveryLessonQuestionHasItsAnswerStorm(t *testing.T) {
	s := startServer(t, withParts())
	for _, ls := range stormLessons(t, s.lessons()) {
		t.Run(fmt.Sprint(ls.N), func(t *testing.T) { classLesson(t, s, ls) })
	}
}

// classLesson plays lesson ls in a new lab of s through the class, each
// question asked and revealed, and checks the choices and the end.
func classLesson(t *testing.T, s *testServer, ls lesson.Lesson) {
	keys := views.Keys()
	lab := s.newLab("")
	teacher, _ := s.classOn(lab)
	s.lessonAt(lab, ls.N, "", 0)
	asked := 0
	for i := range ls.Steps {
		a, _, ok := class.StepAsk(ls, i)
		if !ok {
			s.must(http.StatusOK, "POST", lab+"/lesson/step", fmt.Sprintf(`{"at":%d}`, i))
			continue
		}
		asked++
		if len(a.Choices) < 2 || len(a.Choices) > 4 {
			t.Errorf("step %d: %d choices", i, len(a.Choices))
		}
		for _, c := range a.Choices {
			if w := keys["class.c."+c]; w[0] == "" || w[1] == "" {
				t.Errorf("step %d: no words for choice %q", i, c)
			}
		}
		s.must(http.StatusOK, "POST", lab+"/class/questions", "", "Cookie", teacher)
		got := s.must(http.StatusOK, "POST", lab+"/class/reveal", "", "Cookie", teacher).JSON(t)
		if got["right"] == "" || got["lesson"] != float64(ls.N) || got["step"] != float64(i) {
			t.Errorf("step %d (%s): no choice happened: %v", i, ls.Steps[i].Kind, got)
		}
	}
	if asked == 0 {
		t.Errorf("lesson %d asks nothing", ls.N)
	}
	if st := s.must(http.StatusOK, "GET", lab+"/lesson", "").JSON(t)["state"]; st != "met" {
		t.Errorf("played through the class, lesson %d is %v, not as in the article", ls.N, st)
	}
}

// Asking again is safe: the same open question, lesson or generic, with
// or without an Idempotency-Key; another question while one is open is
// refused.
func TestClassAskIsSafeToRetry(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	teacher, _ := s.classOn(lab)
	first := s.must(http.StatusOK, "POST", lab+"/class/questions", `{"action":"charge"}`, "Cookie", teacher).JSON(t)
	again := s.must(http.StatusOK, "POST", lab+"/class/questions", `{"action":"charge"}`, "Cookie", teacher).JSON(t)
	if first["n"] != float64(1) || again["n"] != float64(1) {
		t.Errorf("asked twice: questions %v and %v, want 1 both times", first["n"], again["n"])
	}
	s.must(http.StatusBadRequest, "POST", lab+"/class/questions", `{"action":"race"}`, "Cookie", teacher)
	a := s.must(http.StatusOK, "POST", lab+"/class/reveal", "", "Cookie", teacher, "Idempotency-Key", "reveal-1")
	b := s.must(http.StatusOK, "POST", lab+"/class/reveal", "", "Cookie", teacher, "Idempotency-Key", "reveal-1")
	if b.Header.Get("Idempotent-Replayed") != "true" || string(a.Body) != string(b.Body) || s.ledger(lab).Count != 1 {
		t.Errorf("a reveal replayed by its key: %q, %d charges\n%s\n%s", b.Header.Get("Idempotent-Replayed"), s.ledger(lab).Count, a.Body, b.Body)
	}
}
