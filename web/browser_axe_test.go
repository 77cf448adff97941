package web_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeFinding is one rule result of axe-core.
type axeFinding struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		Summary string `json:"summary"`
	} `json:"nodes"`
}

func (f axeFinding) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s: %s (%d elements)", f.Impact, f.ID, f.Help, len(f.Nodes))
	for i, n := range f.Nodes {
		if i == 4 {
			fmt.Fprintf(&b, "\n      … %d more", len(f.Nodes)-i)
			break
		}
		fmt.Fprintf(&b, "\n      %v: %s", n.Target, strings.ReplaceAll(n.Summary, "\n", " / "))
	}
	return b.String()
}

// axeSource is axe-core's script, vendored under testdata.
func axeSource(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "testdata", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core: %v", err)
	}
	return string(src)
}

// axe runs axe-core in the page, logs every result that needs review, and
// fails on every violation, whatever its impact: a moderate one (a main
// landmark inside another) went unseen while only serious and critical
// ones failed.
func (l *labTab) axe(src, when string) {
	l.t.Helper()
	if !eval[bool](l, `typeof axe !== "undefined"`) {
		l.do(chromedp.Evaluate[chromedp.Void](src))
	}
	raw := eval[string](l, `axe.run(document, {resultTypes: ["violations", "incomplete"]}).then(r => {
		const f = (v) => ({id: v.id, impact: v.impact ?? "", help: v.help,
			nodes: v.nodes.map(n => ({target: n.target, summary: n.failureSummary ?? ""}))});
		return JSON.stringify({violations: r.violations.map(f), incomplete: r.incomplete.map(f)});
	})`)
	var res struct{ Violations, Incomplete []axeFinding }
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		l.t.Fatalf("axe result: %v", err)
	}
	var bad []string
	for _, v := range res.Violations {
		bad = append(bad, v.String())
	}
	for _, v := range res.Incomplete {
		l.t.Logf("axe %s: needs review %s", when, v)
	}
	l.t.Logf("axe %s: %d violations, %d to review", when, len(res.Violations), len(res.Incomplete))
	if len(bad) > 0 {
		l.t.Errorf("axe %s: %d violations:\n  %s", when, len(bad), strings.Join(bad, "\n  "))
	}
}

func TestBrowserAxe(t *testing.T) {
	t.Parallel()
	src := axeSource(t)
	l := openLab(t, lesson1Settings)
	l.axe(src, "empty lab")
	l.doubleCharge()
	l.axe(src, "after a double charge")
	for _, lang := range []string{"en", "ru"} {
		l.navigate(l.url + "?lang=" + lang)
		l.do(chromedp.Click(chromedp.CSS(`[data-testid="lesson-choose"][value="1"]`)))
		l.waitJS(`document.querySelector("#lesson-state")?.dataset.lesson === "1"`, "lesson 1 to open")
		l.axe(src, "with lesson 1 open ("+lang+")")
		l.do(chromedp.Click(tid("lesson-setup")))
		l.waitJS(`document.querySelector("#lesson-state")?.dataset.ready === "yes"`, "lesson 1 to be set up")
		l.do(chromedp.Click(tid("lesson-step")))
		l.waitJS(`document.querySelector("#lesson-state")?.dataset.next === "1"`, "lesson 1's first step")
		l.axe(src, "in lesson 1, after a step ("+lang+")")
		l.do(chromedp.Click(tid("lesson-close")))
		l.waitJS(`document.querySelector("#lesson-state")?.dataset.lesson === "0"`, "the lesson to close")
	}
}
