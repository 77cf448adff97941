package views_test

import (
	"testing"

	"idemlab/views"
)

// The join address breaks into its origin, its path and its code, which
// make it up again whole.
func TestJoinURLPieces(t *testing.T) {
	for _, tc := range []struct{ url, origin, path, code string }{
		{"http://127.0.0.1:8080/join/ABCDEF", "http://127.0.0.1:8080", "/join/", "ABCDEF"},
		{"https://lab.example/idem/join/ABCDEF", "https://lab.example/idem", "/join/", "ABCDEF"},
		{"https://lab.example/ABCDEF", "https://lab.example/", "", "ABCDEF"},
		{"ABCDEF", "ABCDEF", "", ""},
		{"", "", "", ""},
	} {
		origin, path, code := views.ClassView{JoinURL: tc.url}.JoinURLPieces()
		if origin != tc.origin || path != tc.path || code != tc.code || origin+path+code != tc.url {
			t.Errorf("%q: %q %q %q, want %q %q %q", tc.url, origin, path, code, tc.origin, tc.path, tc.code)
		}
	}
}
