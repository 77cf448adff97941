package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"idemlab/sim"
	"idemlab/views"
)

// TestDiagramSamples writes the diagram of a few operations, in English and
// in Russian, as HTML pages styled by the lab's stylesheets, into the
// folder $IDEMLAB_DIAGRAM_SAMPLES, to be looked at or screenshot; each page
// also measures its labels and lists, in #spill, those that leave the
// drawing or their box, or overlap another label or a mark. Without the variable it skips.
func TestDiagramSamples(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("IDEMLAB_DIAGRAM_SAMPLES")
	if dir == "" {
		t.Skip("IDEMLAB_DIAGRAM_SAMPLES is not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	static, err := filepath.Abs("../static")
	if err != nil {
		t.Fatal(err)
	}
	story := dgStory()
	part := func(from, to int) *sim.Operation {
		op := *story
		op.Attempts = story.Attempts[from:to]
		return &op
	}
	many := &sim.Operation{ID: "op-8", OrderID: "order-43", Amount: 250000, KeyStrategy: sim.KeyUUIDPerRequest}
	for n := 1; n <= 21; n++ {
		many.Attempts = append(many.Attempts, sim.Attempt{N: n, Key: dgPtr(fmt.Sprintf("%08x-7b4d", n)), Fate: sim.FateOK, Status: 201, Outcome: sim.OutcomeCharged})
	}
	samples := []struct {
		name string
		op   *sim.Operation
	}{
		{"a-lost-dup-slow", part(0, 4)},
		{"b-late-lost-409-422", part(4, 8)},
		{"c-400-500-replay-twice", part(8, 12)},
		{"d-21-attempts", many},
		{"e-empty", nil},
	}
	for _, s := range samples {
		for _, lang := range dgLangs {
			var b strings.Builder
			if err := views.SequenceDiagram(diagramOf(s.op)).Render(views.WithLang(context.Background(), lang), &b); err != nil {
				t.Fatal(err)
			}
			page := fmt.Sprintf(dgSamplePage, lang, "file://"+static, lang.T("diagram.section"), b.String())
			file := filepath.Join(dir, s.name+"-"+string(lang)+".html")
			if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", file)
		}
	}
}

const dgSamplePage = `<!doctype html>
<html lang="%[1]s"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="%[2]s/lab.css"><link rel="stylesheet" href="%[2]s/diagram.css"><link rel="stylesheet" href="%[2]s/panels.css"></head>
<body><main><div class="lab">
<section class="panel act"><h2>…</h2></section>
<div class="results"><section class="panel"><h2>%[3]s</h2><div id="diagram-region">%[4]s</div></section></div>
</div></main>
<pre id="spill" hidden></pre>
<script>
const svg = document.querySelector(".diagram-svg"), W = svg.viewBox.baseVal.width, out = [];
const texts = [...svg.querySelectorAll("text")].map(t => ({t, b: t.getBBox()}));
for (const {t, b} of texts) {
	if (b.x < 0 || b.x + b.width > W) out.push("outside the drawing: " + t.textContent + " " + b.x.toFixed(1) + ".." + (b.x + b.width).toFixed(1));
	const r = t.parentNode.querySelector("rect");
	if (r && /sd-(server|commit)-label|sd-lane/.test(t.getAttribute("class"))) {
		const rb = r.getBBox();
		if (b.x < rb.x + 4 || b.x + b.width > rb.x + rb.width - 4 || b.y < rb.y || b.y + b.height > rb.y + rb.height)
			out.push("out of its box: " + t.textContent + " " + b.x.toFixed(1) + ".." + (b.x + b.width).toFixed(1) + " in " + rb.x.toFixed(1) + ".." + (rb.x + rb.width).toFixed(1));
	}
}
for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
	const a = texts[i].b, c = texts[j].b;
	if (a.x < c.x + c.width - 1 && c.x < a.x + a.width - 1 && a.y < c.y + c.height - 2 && c.y < a.y + a.height - 2)
		out.push("overlap: " + texts[i].t.textContent + " / " + texts[j].t.textContent);
}
const marks = [...svg.querySelectorAll(".sd-cross, .sd-clock, .sd-node, .sd-box, .sd-lane-box")];
for (const {t, b} of texts) for (const m of marks) {
	if (m.parentNode === t.parentNode && m.tagName === "rect") continue; // its own box
	const c = m.getBBox();
	if (b.x < c.x + c.width && c.x < b.x + b.width && b.y < c.y + c.height && c.y < b.y + b.height)
		out.push("text on a mark: " + t.textContent + " / " + m.getAttribute("class"));
}
if (document.documentElement.scrollWidth > innerWidth) out.push("page scrolls sideways: " + document.documentElement.scrollWidth);
document.getElementById("spill").textContent = out.length ? out.join("\n") : "ok";
</script></body></html>
`
