package web

import "strings"

// Markdown for the report: what people typed, written so that a Markdown
// viewer shows it as text (CommonMark 0.31).

// mdCode writes s as a code span that holds it whatever it is (6.1): fenced
// by a run of backticks longer than any inside it, and padded with a space
// at each end when s starts or ends with a backtick, or with a space at both
// ends, so that the one space a reader strips from each end is the padding.
// Inside a code span nothing is markup: no emphasis, no HTML.
func mdCode(s string) string {
	longest, run := 0, 0
	for i := range len(s) {
		if s[i] != '`' {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	fence := strings.Repeat("`", longest+1)
	if s != "" && (s[0] == '`' || s[len(s)-1] == '`' ||
		s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdSpecial are the characters that could make markup of text in the
// middle of a line: code, emphasis, links and images, HTML, entities.
const mdSpecial = "\\`*_[]<>&"

// mdText escapes the characters of s that could make markup in the middle
// of a line with a backslash (2.4): a viewer shows them as they are, and
// the raw text changes only where they stand.
func mdText(s string) string {
	if !strings.ContainsAny(s, mdSpecial) {
		return s
	}
	var b strings.Builder
	for i := range len(s) {
		if strings.IndexByte(mdSpecial, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
