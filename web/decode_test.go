package web

import (
	"errors"
	"testing"
)

// A body is decoded only when every JSON reader reads it alike; the rest
// is refused, naming the field, whatever the types: here a free-text
// field, which Go's encoding/json would fill with U+FFFD for bytes that
// are not UTF-8.
func TestReadAlike(t *testing.T) {
	t.Parallel()
	type inner struct {
		N    int    `json:"n"`
		Note string `json:"note,omitempty"`
	}
	type body struct {
		Text  string           `json:"text"`
		Big   int64            `json:"big"`
		Inner *inner           `json:"inner"`
		List  []inner          `json:"list"`
		Map   map[string]inner `json:"map"`
		Any   any              `json:"any"`
		Plain int
		//lint:ignore U1000 an unexported field: the decoder must leave it alone
		hidden int
		Skip   int `json:"-"`
	}
	for _, tc := range []struct {
		name, in string
		field    string // "" when the body passes
		ok       bool
	}{
		{"plain", `{"text":"héllo","big":9007199254740991,"inner":{"n":1},"list":[{"n":2}],"map":{"Any Name":{"n":3}},"any":{"x":[1,{"y":2}]},"Plain":5}`, "", true},
		{"negative edge", `{"big":-9007199254740991}`, "", true},
		{"fractions", `{"any":[0.5,-1e-300,1e300]}`, "", true},
		{"text not UTF-8", "{\"text\":\"h\xe9llo\"}", "text", false},
		{"half a surrogate pair", `{"text":"\udc00"}`, "text", false},
		{"a whole pair", `{"text":"\ud83d\ude00"}`, "", true},
		{"nested not UTF-8", "{\"list\":[{\"n\":1},{\"note\":\"\xff\"}]}", "list.1.note", false},
		{"name twice", `{"text":"a","text":"b"}`, "text", false},
		{"name twice in a map", `{"map":{"k":{"n":1},"k":{"n":2}}}`, "map.k", false},
		{"name twice in any", `{"any":{"x":1,"x":2}}`, "any.x", false},
		{"name twice in an array", `{"list":[{"n":1},{"n":1,"n":2}]}`, "list.1.n", false},
		{"name in another case", `{"Text":"a"}`, "Text", false},
		{"nested name in another case", `{"inner":{"N":1}}`, "inner.N", false},
		{"in a list", `{"list":[{"n":1},{"N":1}]}`, "list.1.N", false},
		{"untagged in another case", `{"plain":1}`, "plain", false},
		{"map names are free", `{"map":{"N":{"n":1},"n":{"n":2}}}`, "", true},
		{"unexported", `{"hidden":1}`, "hidden", false},
		{"skipped", `{"Skip":1}`, "Skip", false},
		{"big", `{"big":9007199254740992}`, "big", false},
		{"big negative", `{"big":-9007199254740992}`, "big", false},
		{"huge", `{"any":1e400}`, "any", false},
		{"big, written as a fraction", `{"any":9007199254740993.0}`, "", true},
		{"big in a list", `{"any":[1,2,9007199254740993]}`, "any.2", false},
		{"whole in another spelling", `{"big":1.5e3,"inner":{"n":2e0},"list":[{"n":30.0}]}`, "", true},
		{"big in another spelling", `{"big":9.007199254740993e15}`, "big", false},
		{"a fraction for a whole number", `{"big":0.5}`, "big", false},
		{"a second value", `{"text":"a"} {"text":"b"}`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := decodeBody([]byte(tc.in), &body{})
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var p *Problem
			if !errors.As(err, &p) || p.Status != 400 {
				t.Fatalf("%v, want a 400 problem", err)
			}
			if tc.field == "" {
				return
			}
			if len(p.Errors) != 1 || p.Errors[0].Field != tc.field || p.Errors[0].Detail == "" {
				t.Errorf("errors %+v, want one naming %s", p.Errors, tc.field)
			}
		})
	}
}
