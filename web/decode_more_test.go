package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"idemlab/sim"
)

// wantProblem asserts that err is a 400 problem whose detail holds detail
// and, when field is not "", whose only error names field with fieldDetail
// in its words.
func wantProblem(t *testing.T, err error, detail, field, fieldDetail string) {
	t.Helper()
	var p *Problem
	if !errors.As(err, &p) || p.Status != 400 {
		t.Fatalf("%v, want a 400 problem", err)
	}
	if !strings.Contains(p.Detail, detail) {
		t.Errorf("detail %q, want it to say %q", p.Detail, detail)
	}
	if field == "" {
		if len(p.Errors) != 0 {
			t.Errorf("errors %+v, want none", p.Errors)
		}
		return
	}
	if len(p.Errors) != 1 || p.Errors[0].Field != field || !strings.Contains(p.Errors[0].Detail, fieldDetail) {
		t.Errorf("errors %+v, want one naming %s that says %q", p.Errors, field, fieldDetail)
	}
}

// Each refusal of a charge's body says what is wrong in the words the API
// has always used, and names the field by its path.
func TestDecodeProblemWords(t *testing.T) {
	t.Parallel()
	const ambiguous = "can be read in more than one way"
	for _, tc := range []struct {
		name, in                   string
		detail, field, fieldDetail string
	}{
		{"empty", "", "The body is empty", "", ""},
		{"whitespace", " \n\t ", "The body is empty", "", ""},
		{"truncated", `{"order_id":"order-42","amo`, "ends too soon", "", ""},
		// The byte counted from 1, as encoding/json counted it (41 here).
		{"syntax", `{"order_id": "order-42", "amount": 1500,,}`, "not valid JSON (at byte 41)", "", ""},
		{"a second object", `{"amount":1}{"amount":2}`, "there is more after it", "", ""},
		{"garbage after", `{"amount":1} x`, "there is more after it", "", ""},
		{"an array", `[{"amount":1}]`, "must be a JSON object", "", ""},
		{"a number", `5`, "must be a JSON object", "", ""},
		{"a string", `"order-42"`, "must be a JSON object", "", ""},
		{"amount as a string", `{"amount":"1500"}`, "wrong type", "amount", "must be a whole number"},
		{"amount fractional", `{"amount":1500.5}`, "wrong type", "amount", "must be a whole number within range"},
		{"amount beyond int64", `{"amount":99999999999999999999}`, "wrong type", "amount", "must be a whole number within range"},
		{"amount 1e20", `{"amount":1e20}`, "wrong type", "amount", "must be a whole number within range"},
		{"amount true", `{"amount":true}`, "wrong type", "amount", "must be a whole number"},
		{"order_id a number", `{"order_id":42}`, "wrong type", "order_id", "must be a string"},
		{"unknown", `{"currency":"RUB"}`, "a field this endpoint does not know", "currency", "is not a field of this request"},
		{"another case", `{"Amount":1}`, ambiguous, "Amount", "differs from amount in case only"},
		{"upper case", `{"ORDER_ID":"order-42"}`, ambiguous, "ORDER_ID", "differs from order_id in case only"},
		{"not a case twin", `{"orderid":"order-42"}`, "does not know", "orderid", "is not a field of this request"},
		{"twice", `{"amount":1,"amount":2}`, ambiguous, "amount", "must be given once"},
		{"twice, escaped", `{"amount":1,"\u0061mount":2}`, ambiguous, "amount", "must be given once"},
		{"not UTF-8", "{\"order_id\":\"order-\xff\"}", ambiguous, "order_id", "must be valid UTF-8"},
		{"half a surrogate pair", `{"order_id":"order-\ud800"}`, ambiguous, "order_id", "must be valid UTF-8"},
		{"a surrogate and a letter", `{"order_id":"\ud800\u0041"}`, ambiguous, "order_id", "must be valid UTF-8"},
		{"a name not UTF-8", "{\"\xff\":1}", "A name in the body is not valid UTF-8", "", ""},
		{"beyond 2^53", `{"amount":9007199254740992}`, ambiguous, "amount", "must be a number from -9007199254740991 to 9007199254740991"},
		{"below -2^53", `{"amount":-9007199254740992}`, ambiguous, "amount", "must be a number from -9007199254740991"},
		// The first fault in the body is the one told: here an unknown
		// name before the end of the body (encoding/json checked the
		// syntax of the whole body first and said it ends too soon).
		{"unknown, then truncated", `{"currency":"RUB","amo`, "does not know", "currency", "is not a field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, decodeBody([]byte(tc.in), &chargeBody{}), tc.detail, tc.field, tc.fieldDetail)
		})
	}
}

// A settings PATCH is as strict inside retry as at the top, and names
// the nested field by its path, although sim.RetryPatch decodes itself
// with encoding/json, which is neither.
func TestDecodeSettingsNested(t *testing.T) {
	t.Parallel()
	const ambiguous = "can be read in more than one way"
	for _, tc := range []struct {
		name, in                   string
		detail, field, fieldDetail string
	}{
		{"unknown", `{"retry":{"max_attempts":3,"colour":"red"}}`, "does not know", "retry.colour", "is not a field"},
		{"another case", `{"retry":{"Max_Attempts":3}}`, ambiguous, "retry.Max_Attempts", "differs from max_attempts in case only"},
		{"twice", `{"retry":{"max_attempts":3,"max_attempts":4}}`, ambiguous, "retry.max_attempts", "must be given once"},
		{"retry twice", `{"retry":{"max_attempts":3},"retry":{"max_attempts":4}}`, ambiguous, "retry", "must be given once"},
		{"a string", `{"retry":{"max_attempts":"3"}}`, "wrong type", "retry.max_attempts", "must be a whole number"},
		{"mode a number", `{"retry":{"mode":5}}`, "wrong type", "retry.mode", "must be a string"},
		// Beyond what JSON readers hold exactly, a setting names its own range.
		{"beyond 2^53", `{"retry":{"max_attempts":9007199254740993}}`, "not valid", "retry.max_attempts", "must be an integer from 1 to 10"},
		{"not UTF-8", "{\"retry\":{\"mode\":\"\xfe\"}}", ambiguous, "retry.mode", "must be valid UTF-8"},
		{"not an object", `{"retry":5}`, "wrong type", "retry", "must be a JSON object"},
		{"an array", `{"retry":[1]}`, "wrong type", "retry", "must be a JSON object"},
		{"a Kelvin sign", `{"\u212aey_strategy":"none"}`, ambiguous, "\u212aey_strategy", "differs from key_strategy in case only"},
		{"seed beyond 2^53", `{"seed":9007199254740993}`, "not valid", "seed", "must be an integer from 0 to 9007199254740991"},
		{"seed 1e16", `{"seed":1e16}`, "not valid", "seed", "must be an integer from 0 to 9007199254740991"},
		{"seed a fraction", `{"seed":1.5}`, "wrong type", "seed", "must be a whole number within range"},
		{"publish_dedup a string", `{"publish_dedup":"yes"}`, "wrong type", "publish_dedup", "must be true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantProblem(t, decodeBody([]byte(tc.in), &sim.SettingsPatch{}), tc.detail, tc.field, tc.fieldDetail)
		})
	}

	var p sim.SettingsPatch
	if err := decodeBody([]byte(`{"protection":"replay","retry":{"mode":"auto","max_attempts":5,"cap_ms":-0},"seed":9007199254740991}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.Protection == nil || *p.Protection != sim.ProtectReplay || p.Retry == nil || p.Retry.Mode == nil || *p.Retry.Mode != "auto" ||
		p.Retry.MaxAttempts == nil || *p.Retry.MaxAttempts != 5 || p.Retry.CapMS == nil || *p.Retry.CapMS != 0 ||
		p.Retry.BaseMS != nil || p.Seed == nil || *p.Seed != 1<<53-1 {
		t.Errorf("decoded %+v, retry %+v", p, p.Retry)
	}
}

// A body that passes is read as encoding/json reads it, into a value that
// is not empty too: a null leaves a number, a string, a bool or a struct as
// it was and empties a pointer, a slice or a map; an object merges into
// the struct a pointer points to.
func TestDecodeLikeEncodingJSON(t *testing.T) {
	t.Parallel()
	type inner struct {
		N int    `json:"n"`
		S string `json:"s"`
	}
	type body struct {
		N     int            `json:"n"`
		S     string         `json:"s"`
		B     bool           `json:"b"`
		F     sim.Fate       `json:"f"`
		P     *int           `json:"p"`
		In    inner          `json:"in"`
		PIn   *inner         `json:"p_in"`
		List  []int          `json:"list"`
		Map   map[string]int `json:"map"`
		Any   any            `json:"any"`
		Retry *sim.RetryPatch
	}
	filled := func() *body {
		seven, three := 7, 3
		return &body{N: 1, S: "s", B: true, F: sim.FateSlow, P: &seven, In: inner{2, "in"}, PIn: &inner{3, "p"},
			List: []int{1, 2, 3}, Map: map[string]int{"a": 1}, Any: "any", Retry: &sim.RetryPatch{MaxAttempts: &three}}
	}
	for _, in := range []string{
		`{}`,
		`null`,
		`{"n":null,"s":null,"b":null,"f":null,"p":null,"in":null,"p_in":null,"list":null,"map":null,"any":null,"Retry":null}`,
		`{"n":5,"s":"t","b":false,"f":"ok","p":8}`,
		`{"in":{"s":"x"},"p_in":{"n":9}}`,
		`{"list":[5],"map":{"b":2},"any":{"x":[1,"y"]}}`,
		`{"Retry":{"mode":"auto"}}`,
		`{"p":null,"in":{"n":null}}`,
		`{"s":"\ud83d\ude00 \u00e9 \"q\""}`,
	} {
		t.Run(in, func(t *testing.T) {
			want, got := filled(), filled()
			if err := json.NewDecoder(bytes.NewReader([]byte(in))).Decode(want); err != nil {
				t.Fatal(err)
			}
			if err := decodeBody([]byte(in), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-encoding/json +decodeBody):\n%s", diff)
			}
		})
	}
}

// decodeJSON reads the body before it looks at the content type, and an
// optional body may be empty whatever the content type says.
func TestDecodeJSONOptional(t *testing.T) {
	t.Parallel()
	try := func(body, contentType string, optional bool) error {
		req := httptest.NewRequest("POST", "/", strings.NewReader(body))
		if contentType != "" {
			req.Header.Set(echo.HeaderContentType, contentType)
		}
		c := echo.New().NewContext(req, httptest.NewRecorder())
		var b struct {
			WithKey *bool `json:"with_key"`
		}
		return decodeJSON(c, &b, optional)
	}
	if err := try(" \n", "", true); err != nil {
		t.Errorf("an empty optional body: %v", err)
	}
	if err := try(`{"with_key":false}`, "application/problem+json; charset=utf-8", true); err != nil {
		t.Errorf("a +json body: %v", err)
	}
	var p *Problem
	if err := try("", "", false); !errors.As(err, &p) || p.Status != 415 {
		t.Errorf("an empty body without a content type: %v, want 415", err)
	}
	wantProblem(t, try("", "application/json", false), "The body is empty", "", "")
	wantProblem(t, try(`{"with_key":"yes"}`, "application/json", true), "wrong type", "with_key", "must be true or false")
}

// A number is checked even where any JSON value will do, as it reaches a
// type that reads it itself.
func TestDecodeRawNumbers(t *testing.T) {
	t.Parallel()
	type body struct {
		Raw json.RawMessage `json:"raw"`
	}
	for in, field := range map[string]string{
		`{"raw":1e400}`:            "raw",
		`{"raw":9007199254740993}`: "raw",
		`{"raw":9007199254740991}`: "",
		`{"raw":1e300}`:            "",
	} {
		err := decodeBody([]byte(in), &body{})
		if field == "" {
			if err != nil {
				t.Errorf("%s: %v", in, err)
			}
			continue
		}
		wantProblem(t, err, "can be read in more than one way", field, "must be a number from")
	}
}
