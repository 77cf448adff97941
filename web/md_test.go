package web

import "testing"

// A code span holds any text: the fence is longer than any run of
// backticks inside, and padding goes where a reader strips a space.
func TestMarkdownCodeSpans(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"order-42", "`order-42`"},
		{"a`b", "``a`b``"},
		{"`<img src=x onerror=alert(1)>", "`` `<img src=x onerror=alert(1)> ``"},
		{"x`", "`` x` ``"},
		{"a``b`", "``` a``b` ```"},
		{"``", "``` `` ```"},
		{" both ends ", "`  both ends  `"},
		{" one end", "` one end`"},
		{"   ", "`   `"},
	} {
		if got := mdCode(tc.in); got != tc.want {
			t.Errorf("mdCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got, want := mdText("key _order_ <b>&amp; `x` *y* [z]"), `key \_order\_ \<b\>\&amp; \`+"`"+`x\`+"`"+` \*y\* \[z\]`; got != want {
		t.Errorf("mdText = %q, want %q", got, want)
	}
}
