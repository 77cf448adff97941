package outage

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"idemlab/sim/logtest"
)

// A thousand failures in a row, from many goroutines, make one line; the
// answer after them one more; a second outage two more.
func TestOneLinePerOutage(t *testing.T) {
	var buf logtest.Buffer
	w := New(buf.Logger(), "redis", "flag", "-redis")
	var wg sync.WaitGroup
	for range 1000 {
		wg.Go(func() { w.Failed(errors.New("i/o timeout"), "set-nx answers 503") })
	}
	wg.Wait()
	if !w.Down() {
		t.Error("not down after the failures")
	}
	for range 10 {
		w.Ok()
	}
	w.Failed(errors.New("refused"), "set-nx answers 503")
	w.Ok()
	lines := buf.Lines()
	if len(lines) != 4 {
		t.Fatalf("%d lines; want 4:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{"redis does not answer", "failures=1000", "redis does not answer", "failures=1"} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], "flag=-redis") {
			t.Errorf("line %d: %s; want %q and the flag", i+1, lines[i], want)
		}
	}
}
