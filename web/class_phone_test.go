package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"idemlab/sim/labs"
	"idemlab/web"
)

// Without JavaScript the phone page is a form: a vote posts it and comes
// back to the page, which shows the vote; a vote after the reveal comes
// back with why it was refused. The take-home reports carry the question,
// the votes and the right choice.
func TestClassFormAndReports(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	lab := s.newLab("")
	teacher, code := s.classOn(lab)
	s.lessonAt(lab, 1, "", 1)
	s.must(http.StatusOK, "POST", lab+"/class/questions", "", "Cookie", teacher)
	form := "question=1&choice=2"
	ck := "idemlab_voter=form-phone"
	// the client follows the 303 back to the page
	r := s.do("POST", "/join/"+code+"/votes", form, "Content-Type", "", "Content-Type", "application/x-www-form-urlencoded", "Cookie", ck)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `data-testid="phone-mine"`) {
		t.Fatalf("a form's vote: %d, the page after it does not show it\n%s", r.Status, r.Body)
	}
	s.must(http.StatusOK, "POST", lab+"/class/reveal", "", "Cookie", teacher)
	late := s.do("POST", "/join/"+code+"/votes", form, "Content-Type", "", "Content-Type", "application/x-www-form-urlencoded", "Cookie", ck)
	if late.Status != http.StatusConflict || !strings.Contains(string(late.Body), `data-testid="phone-you"`) {
		t.Errorf("a form's vote after the reveal: %d, want 409 and the reveal\n%s", late.Status, late.Body)
	}
	page := "/labs/" + strings.TrimPrefix(lab, "/api/v1/labs/")
	md := string(s.must(http.StatusOK, "GET", page+"/class/report.md?lang=en", "").Body)
	if !strings.Contains(md, "How many payments will order-42 have after it?") || !strings.Contains(md, "B. 2: 1 (100%) ✓ right") || !strings.Contains(md, "100% predicted it") {
		t.Errorf("report.md:\n%s", md)
	}
	csv := string(s.must(http.StatusOK, "GET", page+"/class/report.csv", "").Body)
	if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 4 || !strings.Contains(lines[2], ",2,2,1,100,true,100,") {
		t.Errorf("report.csv:\n%s", csv)
	}
}

// Guessing join codes is slow: past 600 codes that name no class, an
// address waits (429 with Retry-After); a class's own page still opens.
func TestClassCodesAreNotGuessed(t *testing.T) {
	t.Parallel()
	// the limit as it is, but refilled once an hour: a slow run refills none
	s := startServer(t, withLimits(labs.Config{}, web.Options{JoinMissRate: web.Rate{Every: time.Hour, Burst: 600}}))
	lab := s.newLab("")
	_, code := s.classOn(lab)
	for i := range 600 {
		guess := fmt.Sprintf("/join/N%05d", i)
		switch i % 3 { // the QR code's address and the join screen tell a class apart as well
		case 1:
			guess += "/qr.svg"
		case 2:
			guess += "/screen"
		}
		if r := s.do("GET", guess, ""); r.Status != http.StatusNotFound {
			t.Fatalf("guess %d (%s): %d", i, guess, r.Status)
		}
		if i == 0 {
			s.must(http.StatusOK, "GET", "/join/"+code, "")
		}
	}
	for _, guess := range []string{"/join/NOPE22", "/join/NOPE22/qr.svg"} {
		r := s.do("GET", guess, "")
		if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
			t.Errorf("past 600 guesses, %s: %d, Retry-After %q", guess, r.Status, r.Header.Get("Retry-After"))
		}
	}
	s.must(http.StatusOK, "GET", "/join/"+code+"/qr.svg", "")
	s.must(http.StatusOK, "GET", "/join/"+code, "")
}
