package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/labstack/echo/v4"

	"idemlab/sim"
)

// MaxBody is the largest request body the server reads.
const MaxBody = 64 << 10

// limitBody refuses bodies over MaxBody: at once when Content-Length says so,
// and while reading when it does not.
func limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.ContentLength > MaxBody {
			return newProblem(probTooLarge, fmt.Sprintf("The body is %d bytes; the limit is %d.", r.ContentLength, MaxBody))
		}
		r.Body = http.MaxBytesReader(c.Response(), r.Body, MaxBody)
		return next(c)
	}
}

// decodeJSON reads the request's JSON body into dst strictly: the content
// type must be JSON, the body one JSON object that every JSON reader reads
// alike (strictJSON), and every failure is a problem that names what is
// wrong. An empty body is allowed only when optional is set (dst then keeps
// its zero value).
func decodeJSON(c echo.Context, dst any, optional bool) error {
	return decodeWith(c, dst, optional, strictJSON)
}

// decodePatch is decodeJSON for a PATCH: the body is required, and a null
// anywhere in it is refused, naming the member; a PATCH says what to
// change, and null would say nothing (encoding/json leaves the field as
// it was).
func decodePatch(c echo.Context, dst any) error {
	return decodeWith(c, dst, false, strictPatch)
}

func decodeWith(c echo.Context, dst any, optional bool, opts json.Options) error {
	return decodeRaw(c, dst, optional, opts, nil)
}

// decodeWithFast is decodeJSON with a fast reader of the usual body first
// (fast reports whether it read it); the strict decoder takes the rest.
func decodeWithFast(c echo.Context, dst any, fast func([]byte) bool) error {
	return decodeRaw(c, dst, false, strictJSON, fast)
}

func decodeRaw(c echo.Context, dst any, optional bool, opts json.Options, fast func([]byte) bool) error {
	r := c.Request()
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return newProblem(probTooLarge, fmt.Sprintf("The limit is %d bytes.", MaxBody))
		}
		return newProblem(probValidation, "The request body could not be read.")
	}
	if len(bytes.TrimSpace(raw)) == 0 && optional {
		return nil
	}
	if ct := r.Header.Get(echo.HeaderContentType); ct != "application/json" && !jsonMediaType(ct) {
		return newProblem(probMediaType, "Send the body as JSON with Content-Type: application/json.")
	}
	if fast != nil && fast(raw) {
		return nil
	}
	return decodeBodyWith(raw, dst, opts)
}

// jsonMediaType reports whether ct names JSON: application/json or a
// +json type, with any parameters.
func jsonMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// decodeBody decodes raw, a whole request body, into dst in one pass: the
// decoder refuses, as it reads, what readers could read differently.
func decodeBody(raw []byte, dst any) error { return decodeBodyWith(raw, dst, strictJSON) }

func decodeBodyWith(raw []byte, dst any, opts json.Options) error {
	d := borrow(raw, opts)
	defer d.giveBack()
	dec := d.dec
	if err := json.UnmarshalDecode(dec, dst); err != nil {
		return jsonProblem(raw, dst, err)
	}
	// A decoder reads a stream of values; a body is one.
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return newProblem(probValidation, "The body must hold exactly one JSON object; there is more after it.")
	}
	return nil
}

// strictJSON are the options of every request body. They refuse JSON that
// two parsers could read differently, as RFC 7493 (I-JSON) asks, so that
// the lab acts on what the client meant, whatever the client's parser:
//   - a member given twice ({"amount":1,"amount":2}: Go's encoding/json
//     takes the last, others the first or refuse); names are compared
//     after unescaping;
//   - a name that matches a field only when case is ignored ({"Amount":1}:
//     encoding/json takes it, other parsers do not), and any unknown name;
//   - text that is not UTF-8 or half a surrogate pair (encoding/json puts
//     U+FFFD in its place);
//   - whole numbers beyond ±(2^53−1), which a JavaScript program reads as
//     another number (exactNumbers).
//
// A JSON null leaves a field as it was, as encoding/json did; a PATCH
// refuses it (strictPatch).
var strictJSON = json.JoinOptions(
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
	json.MatchCaseInsensitiveNames(false),
	json.RejectUnknownMembers(true),
	jsonv1.MergeWithLegacySemantics(true),
	json.WithUnmarshalers(exactNumbers),
)

// strictPatch are the options of a PATCH's body: strictJSON's, and no null.
var strictPatch = json.JoinOptions(strictJSON, json.WithUnmarshalers(json.JoinUnmarshalers(noNull, exactNumbers)))

// errNull is a null where a PATCH wants a value.
var errNull = errors.New("null in a patch")

// noNull refuses a JSON null, wherever it is.
var noNull = json.UnmarshalFromFunc(func(dec *jsontext.Decoder, _ any) error {
	if dec.PeekKind() != 'n' {
		return json.SkipFunc
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	return errNull
})

// ranged is a request body that knows the range of its whole-number
// fields: a number beyond what every JSON reader holds exactly is refused
// with that range, the one the field takes, rather than the readers'.
type ranged interface {
	Range(field string) (lo, hi int64, ok bool)
}

// jsonProblem explains a decoding error of the body raw in the words of
// the request, from the library's typed errors: what is wrong (their
// sentinel errors, the Go type and the JSON kind) and where (the JSON
// Pointer, which names the field).
func jsonProblem(raw []byte, dst any, err error) *Problem {
	var (
		syn *jsontext.SyntacticError
		sem *json.SemanticError
	)
	p := newProblem(probValidation, "The body is not valid JSON.")
	// ambiguous is a field that JSON readers could read differently.
	ambiguous := func(ptr jsontext.Pointer, detail string) *Problem {
		p.Detail = "The body can be read in more than one way: send each field once, with its name exactly as documented, as UTF-8."
		p.Errors = []sim.FieldError{{Field: fieldOf(ptr), Detail: detail}}
		return p
	}
	switch {
	case errors.Is(err, io.EOF):
		p.Detail = "The body is empty; a JSON object was expected."
	case errors.Is(err, io.ErrUnexpectedEOF):
		p.Detail = "The JSON body ends too soon."
	case errors.Is(err, jsontext.ErrDuplicateName) && errors.As(err, &syn):
		return ambiguous(syn.JSONPointer, "must be given once")
	case errors.As(err, &syn) && notUTF8(raw, syn.ByteOffset) && syn.JSONPointer == "":
		p.Detail = "A name in the body is not valid UTF-8."
	case errors.As(err, &syn) && notUTF8(raw, syn.ByteOffset):
		return ambiguous(syn.JSONPointer, "must be valid UTF-8")
	case errors.As(err, &syn):
		// Counted from 1, as encoding/json did: the byte that is wrong.
		p.Detail = fmt.Sprintf("The body is not valid JSON (at byte %d).", syn.ByteOffset+1)
	case errors.Is(err, json.ErrUnknownName) && errors.As(err, &sem):
		if twin := caseTwin(sem.GoType, sem.JSONPointer.LastToken()); twin != "" {
			return ambiguous(sem.JSONPointer, "is not a field of this request: names are case-sensitive, and this one differs from "+twin+" in case only")
		}
		p.Detail = "The body has a field this endpoint does not know."
		p.Errors = []sim.FieldError{{Field: fieldOf(sem.JSONPointer), Detail: "is not a field of this request"}}
	case errors.Is(err, errInexact) && errors.As(err, &sem):
		if r, ok := dst.(ranged); ok {
			if lo, hi, ok := r.Range(fieldOf(sem.JSONPointer)); ok {
				return problemFor(sim.Invalid(sim.Broke(fieldOf(sem.JSONPointer), "range", lo, hi)))
			}
		}
		return ambiguous(sem.JSONPointer, fmt.Sprintf("must be a number from %d to %d: beyond, JSON readers disagree about it", -maxExact, maxExact))
	case errors.As(err, &sem) && sem.JSONPointer == "":
		p.Detail = "The body must be a JSON object."
	case errors.Is(err, errNull) && errors.As(err, &sem):
		p.Detail = "A PATCH says what to change: leave out a field to keep its value."
		p.Errors = []sim.FieldError{{Field: fieldOf(sem.JSONPointer), Detail: "must not be null"}}
	case errors.As(err, &sem):
		p.Detail = "A field has the wrong type."
		p.Errors = []sim.FieldError{{Field: fieldOf(sem.JSONPointer), Detail: "must be " + typeWord(sem.GoType, sem.JSONKind)}}
	}
	return p
}

// notUTF8 reports whether the text at off in raw is not UTF-8: a byte that
// begins no UTF-8 sequence, or an escaped half of a surrogate pair (\ud800
// alone). The library refuses both with a SyntacticError at that offset,
// but exports no error value that tells them from other syntax errors.
func notUTF8(raw []byte, off int64) bool {
	if off < 0 || off >= int64(len(raw)) {
		return false
	}
	b := raw[off:]
	if r, n := utf8.DecodeRune(b); r == utf8.RuneError && n == 1 {
		return true
	}
	if len(b) < len(`\ud800`) || b[0] != '\\' || b[1] != 'u' {
		return false
	}
	u, err := strconv.ParseUint(string(b[2:6]), 16, 16)
	return err == nil && utf16.IsSurrogate(rune(u))
}

// caseTwin is the field of the struct type t whose name differs from
// name in case only ({"Amount":1} for amount), as encoding/json would
// match them (strings.EqualFold), or "" when there is none. The names are
// the library's own: those it writes for t's zero value.
func caseTwin(t reflect.Type, name string) string {
	if t == nil || t.Kind() != reflect.Struct {
		return ""
	}
	var fields map[string]jsontext.Value
	zero, err := json.Marshal(reflect.New(t).Interface())
	if err != nil || json.Unmarshal(zero, &fields) != nil {
		return ""
	}
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		if strings.EqualFold(f, name) {
			return f
		}
	}
	return ""
}

// typeWord says, in JSON's words, what a field of Go type t takes; k is
// the kind of JSON value sent instead.
func typeWord(t reflect.Type, k jsontext.Kind) string {
	if t == nil {
		return "of the documented type"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if k == '0' {
			return "a whole number within range"
		}
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		if k == '0' {
			return "a number within range"
		}
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	}
	return "of the documented type"
}

// fieldOf names the field at a JSON Pointer as the errors do: retry.cap_ms,
// list.1.note.
func fieldOf(p jsontext.Pointer) string {
	return strings.Join(slices.Collect(p.Tokens()), ".")
}
