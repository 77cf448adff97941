package views

// The drawing's primitives: the shapes the template draws, and how wide the
// words in them are set, so that boxes and lines fit the reader's language.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sdTextWidth estimates how wide s is set in a bold sans-serif of size
// units, counting runes, not bytes. The advances are DejaVu Sans Bold's
// (Chromium's system-ui on Linux), the widest of the usual system fonts: a
// box sized by them holds the words in any of those fonts.
func sdTextWidth(s string, size float64) float64 {
	em := 0.0
	for _, r := range s {
		a, ok := sdAdvances[r]
		if !ok {
			a = 0.8
		}
		em += a
	}
	return em * size
}

// sdAdvances are the advances of DejaVu Sans Bold, in em.
var sdAdvances = func() map[rune]float64 {
	m := map[rune]float64{}
	for _, set := range []struct {
		runes    string
		hundreds []int
	}{
		{"abcdefghijklmnopqrstuvwxyz", []int{67, 72, 59, 72, 68, 44, 72, 71, 34, 34, 67, 34, 104, 71, 69, 72, 72, 49, 60, 48, 71, 65, 92, 65, 65, 58}},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZ", []int{77, 76, 73, 83, 68, 68, 82, 84, 37, 37, 77, 64, 100, 84, 85, 73, 85, 77, 72, 68, 81, 77, 110, 77, 72, 73}},
		{"абвгдеёжзийклмнопрстуфхцчшщъыьэюя", []int{67, 70, 63, 52, 81, 68, 68, 100, 58, 70, 70, 68, 73, 82, 69, 69, 69, 72, 59, 58, 65, 99, 65, 74, 69, 106, 111, 75, 90, 63, 59, 97, 64}},
		{"АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯ", []int{77, 76, 76, 64, 89, 68, 68, 122, 71, 84, 84, 82, 83, 100, 84, 85, 84, 73, 73, 68, 77, 99, 77, 93, 81, 124, 133, 94, 104, 76, 73, 117, 77}},
		{"0123456789", []int{70, 70, 70, 70, 70, 70, 70, 70, 70, 70}},
		{" .,:;·…→✕-–—()%₽«»\"'!?/", []int{35, 38, 38, 40, 40, 38, 100, 84, 84, 42, 50, 100, 46, 46, 100, 70, 65, 65, 40, 28, 44, 58, 37}},
		// The no-break space and the minus of amounts as Lang.Money writes them.
		{"\u00a0\u2212", []int{35, 84}},
	} {
		for i, r := range []rune(set.runes) {
			m[r] = float64(set.hundreds[i]) / 100
		}
	}
	return m
}()

// sdLinesWidth is the width of the widest of lines.
func sdLinesWidth(lines []string, size float64) float64 {
	w := 0.0
	for _, l := range lines {
		w = max(w, sdTextWidth(l, size))
	}
	return w
}

// sdLabelText is a label of one line that breaks at its spaces into more
// when it is wider than room; the lines then grow upwards (up) or downwards
// from y.
func sdLabelText(x, y float64, anchor, class, s string, room float64, up bool) sdShape {
	lines := sdWrap(s, room, sdLabel)
	if up {
		y -= float64(len(lines)-1) * sdLineStep * sdLabel
	}
	return text(x, y, anchor, class, lines...)
}

// sdWrap breaks s at spaces into lines no wider than room, as far as its
// words allow.
func sdWrap(s string, room, size float64) []string {
	if sdTextWidth(s, size) <= room {
		return []string{s}
	}
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = w
		case sdTextWidth(cur+" "+w, size) <= room:
			cur += " " + w
		default:
			lines = append(lines, cur)
			cur = w
		}
	}
	return append(lines, cur)
}

func mid(a, b float64) float64 { return (a + b) / 2 }

// num writes a coordinate, to a tenth of a unit.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// perWidth is a length of the drawing for a width of 1 (the style sheet
// sizes the drawing and its pin from it, without knowing sdWidth).
func perWidth(v float64) string { return strconv.FormatFloat(v/sdWidth, 'f', 4, 64) }

func lineStep(i int) string {
	if i == 0 {
		return "0"
	}
	return strconv.FormatFloat(sdLineStep, 'f', -1, 64) + "em"
}

func line(x1, y1, x2, y2 float64, class string) sdShape {
	return sdShape{Kind: sdLine, X: x1, Y: y1, X2: x2, Y2: y2, Class: class}
}

func rect(x, y, w, h float64, class string) sdShape {
	return sdShape{Kind: sdRect, X: x, Y: y, W: w, H: h, Class: class}
}

func circle(x, y, r float64, class string) sdShape {
	return sdShape{Kind: sdCircle, X: x, Y: y, W: r, Class: class}
}

func text(x, y float64, anchor, class string, lines ...string) sdShape {
	return sdShape{Kind: sdText, X: x, Y: y, Anchor: anchor, Class: class, Lines: lines}
}

// head is an arrowhead at (x2, y2) pointing away from (x1, y1), drawn as a
// shape of its own rather than an SVG marker, so that it takes the colour of
// its arrow's class.
func head(x1, y1, x2, y2 float64, class string) sdShape {
	dx, dy := x2-x1, y2-y1
	n := math.Hypot(dx, dy)
	ux, uy := dx/n, dy/n
	bx, by := x2-14*ux, y2-14*uy
	px, py := -uy*7, ux*7
	d := fmt.Sprintf("M%s %sL%s %sL%s %sZ", num(x2), num(y2), num(bx+px), num(by+py), num(bx-px), num(by-py))
	return sdShape{Kind: sdPath, D: d, Class: class}
}

// lostMark is the network's ✕ at (x, y) and its words: right of it for a
// request, left of it for an answer, between the next lifelines, which the
// words never cross (they wrap instead).
func lostMark(x, y float64, words string, right bool) sdGroup {
	const s, gap, clear = 10, 12, 3 // the ✕'s arm, from its centre to the words, from the words to a lifeline
	l := sdLabelText(x-gap, y+6, "end", "sd-label sd-lost-label", words, x-gap-sdClient-clear, true)
	if right {
		l = sdLabelText(x+gap, y+6, "start", "sd-label sd-lost-label", words, sdServer-clear-x-gap, true)
	}
	return sdGroup{Class: "sd-lost", Mark: "lost", Shapes: []sdShape{
		line(x-s, y-s, x+s, y+s, "sd-cross"),
		line(x-s, y+s, x+s, y-s, "sd-cross"),
		l,
	}}
}
