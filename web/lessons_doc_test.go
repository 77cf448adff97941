package web_test

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"idemlab/sim"
)

// The walk-throughs of docs/lessons.md run in labs of seed 42 and show the
// keys the lab draws: every random draw depends only on the lab's seed and
// the numbers of the operation and the attempt, so a reader's lab, on any
// server, draws the keys the page shows.
func TestLessonsDocShowsTheKeysTheLabDraws(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/lessons.md")
	if err != nil {
		t.Fatal(err)
	}
	section := func(n string) string {
		_, s, _ := strings.Cut(string(doc), "\n### "+n+". ")
		s, _, _ = strings.Cut(s, "\n### ")
		return s
	}
	shown := func(n string, re *regexp.Regexp) string {
		m := re.FindStringSubmatch(section(n))
		if m == nil {
			t.Fatalf("docs/lessons.md, lesson %s: no key matching %s", n, re)
		}
		return m[1]
	}
	first := shown("2", regexp.MustCompile(`"key":"([0-9a-f]{8})-…"`))                    // the first operation's
	second := shown("12", regexp.MustCompile(`"key":"([0-9a-f]{8})-…","store":"sqlite"`)) // the second's
	if !strings.Contains(string(doc), `-d '{"seed":42}'`) {
		t.Error("docs/lessons.md: lab() does not give its labs seed 42")
	}
	for range 2 { // two servers: the keys do not depend on which draws them
		s := startServer(t)
		lab := s.newLab(`{"key_strategy":"uuid","seed":42}`)
		for i, want := range []string{first, second} {
			op := s.operation(lab, `{"order_id":"order-4`+itoa(i)+`","amount":1500}`)
			if key := keyOf(op); !strings.HasPrefix(key, want+"-") {
				t.Errorf("operation %d drew key %s; docs/lessons.md shows %s-…", i+1, key, want)
			}
		}
		// A reset starts the draws over.
		s.must(http.StatusNoContent, "POST", lab+"/reset", "")
		if key := keyOf(s.operation(lab, `{"order_id":"order-42","amount":1500}`)); !strings.HasPrefix(key, first+"-") {
			t.Errorf("after a reset: key %s, want %s-…", key, first)
		}
	}
}

func keyOf(op sim.Operation) string {
	if op.Key == nil {
		return "none"
	}
	return *op.Key
}
