package web_test

import "testing"

// The storm lesson played three ways (the browser, the plain forms, a
// class), apart from the parallel tests (stormLessons) but at the same time
// as each other: each takes about a quarter of a core, waiting on its
// storms' clocks, so the three together end in the time of the longest and
// leave the storms' timers on time (eight runs of the three together,
// each lesson as in the article). TestStormJitterSpreadsTheHerd stays
// alone: run beside these, its storms of two hundred clients once peaked
// under three times the jitter's (five times or more alone).
func TestStormLessonsApart(t *testing.T) {
	for name, play := range map[string]func(*testing.T){
		"browser": browserStormLessonPlays,
		"forms":   guidedLessonStormThroughForms,
		"class":   classEveryLessonQuestionHasItsAnswerStorm,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			play(t)
		})
	}
}
