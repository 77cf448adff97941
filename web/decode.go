package web

import (
	"bytes"
	"encoding/json"
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

	"github.com/go-json-experiment/json/jsontext"
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
// type must be JSON, unknown fields and trailing data are refused, JSON that
// parsers could read differently is refused (readAlike), and every failure
// is a problem that names what is wrong. An empty body is allowed only when
// optional is set (dst then keeps its zero value).
func decodeJSON(c echo.Context, dst any, optional bool) error {
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
	mt, _, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return newProblem(probMediaType, "Send the body as JSON with Content-Type: application/json.")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonProblem(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return newProblem(probValidation, "The body must hold exactly one JSON object; there is more after it.")
	}
	return readAlike(raw, reflect.TypeOf(dst))
}

// readAlike refuses JSON that two parsers could read differently, naming
// the field: a member given twice ({"amount":1,"amount":2}: Go takes the
// last, others the first or refuse), a name that matches a field only when
// case is ignored ({"Amount":1}: Go's encoding/json matches it, other
// parsers do not), text that is not UTF-8 or half a surrogate pair (Go puts
// U+FFFD in its place), and whole numbers beyond ±(2^53−1), which a
// JavaScript program reads as another number. The body then holds one
// plain value per field, as RFC 7493 (I-JSON) asks.
//
// github.com/go-json-experiment/json's jsontext (the prototype of Go's
// encoding/json/v2) reads the tokens: it refuses duplicate names (compared
// after unescaping) and invalid UTF-8 by itself and says where, as a JSON
// Pointer; the walk here checks the names against the fields of t.
func readAlike(raw []byte, t reflect.Type) error {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	err := walkJSON(dec, t, "")
	if err == nil {
		if _, err = dec.ReadToken(); errors.Is(err, io.EOF) {
			return nil
		}
	}
	p := newProblem(probValidation, "The body can be read in more than one way: send each field once, with its name exactly as documented, as UTF-8.")
	var (
		fe  *fieldErr
		syn *jsontext.SyntacticError
	)
	switch {
	case errors.As(err, &fe):
		p.Errors = []sim.FieldError{fe.FieldError}
	case errors.As(err, &syn) && errors.Is(err, jsontext.ErrDuplicateName):
		p.Errors = []sim.FieldError{{Field: fieldOf(syn.JSONPointer), Detail: "must be given once"}}
	case errors.As(err, &syn) && len(syn.JSONPointer) > 0 && (strings.Contains(err.Error(), "UTF-8") || strings.Contains(err.Error(), "surrogate")):
		p.Errors = []sim.FieldError{{Field: fieldOf(syn.JSONPointer), Detail: "must be valid UTF-8"}}
	case errors.As(err, &syn) && (strings.Contains(err.Error(), "UTF-8") || strings.Contains(err.Error(), "surrogate")):
		p.Detail = "A name in the body is not valid UTF-8."
	default:
		p.Detail = "The body must hold exactly one JSON object."
	}
	return p
}

// fieldErr is a field that readAlike refuses.
type fieldErr struct{ sim.FieldError }

func (e *fieldErr) Error() string { return e.Field + " " + e.Detail }

// maxExact is the largest whole number every JSON reader holds exactly: a
// JavaScript number is a float64.
const maxExact = 1<<53 - 1

// walkJSON reads one JSON value, which decodes into t (nil when any value
// will do), checking each object's names against t's fields; path is where
// the value is, as the errors name fields (retry.max_attempts, list.0.n).
func walkJSON(dec *jsontext.Decoder, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case '{':
		fields := jsonFields(t)
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return err
			}
			n, at := name.String(), join(path, name.String())
			var ft reflect.Type
			switch {
			case fields != nil:
				var ok bool
				if ft, ok = fields[n]; !ok {
					return &fieldErr{sim.FieldError{Field: at, Detail: unknownName(fields, n)}}
				}
			case t != nil && t.Kind() == reflect.Map:
				ft = t.Elem()
			}
			if err := walkJSON(dec, ft, at); err != nil {
				return err
			}
		}
	case '[':
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		for i := 0; dec.PeekKind() != ']'; i++ {
			if err := walkJSON(dec, et, join(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
	case '0':
		lit := tok.String()
		f, err := strconv.ParseFloat(lit, 64)
		if whole := !strings.ContainsAny(lit, ".eE"); err != nil || whole && (f > maxExact || f < -maxExact) {
			return &fieldErr{sim.FieldError{Field: path, Detail: fmt.Sprintf("must be a number from %d to %d: beyond, JSON readers disagree about it", -maxExact, maxExact)}}
		}
		return nil
	default:
		return nil
	}
	_, err = dec.ReadToken() // the closing } or ]
	return err
}

// unknownName says why name is not a field of fields.
func unknownName(fields map[string]reflect.Type, name string) string {
	for f := range fields {
		if strings.EqualFold(f, name) {
			return "is not a field of this request: names are case-sensitive, and this one differs from " + f + " in case only"
		}
	}
	return "is not a field of this request"
}

// jsonFields are the JSON names of a struct type's fields and their types;
// nil when t is not a struct.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
			continue
		case f.Anonymous && name == "" && jsonFields(f.Type) != nil:
			for n, ft := range jsonFields(f.Type) {
				out[n] = ft
			}
			continue
		case name == "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// fieldOf names the field at a JSON Pointer as the errors do: retry.cap_ms.
func fieldOf(p jsontext.Pointer) string {
	return strings.Join(slices.Collect(p.Tokens()), ".")
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// oneValueEach refuses a form post that gives a field more than once
// (amount=1&amount=2, or in the query and the body): Go's FormValue reads
// the first, other readers the last. It checks the parsed form once, before
// the pages' form handlers read it.
func oneValueEach(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		form, err := c.FormParams()
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return newProblem(probTooLarge, fmt.Sprintf("The limit is %d bytes.", MaxBody))
			}
			p := newProblem(probValidation, "The form could not be read.")
			p.Errors = []sim.FieldError{{Field: "form", Detail: "could not be read"}}
			return p
		}
		var fs []sim.FieldError
		for _, name := range slices.Sorted(maps.Keys(form)) {
			if len(form[name]) > 1 {
				fs = append(fs, sim.FieldError{Field: name, Detail: "must be sent once"})
			}
		}
		if len(fs) > 0 {
			p := newProblem(probValidation, "A field of the form is sent more than once; the lab will not guess which value is meant.")
			p.Errors = fs
			return p
		}
		return next(c)
	}
}

// jsonProblem explains a decoding error in the words of the request.
func jsonProblem(err error) *Problem {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	p := newProblem(probValidation, "The body is not valid JSON.")
	switch {
	case errors.Is(err, io.EOF):
		p.Detail = "The body is empty; a JSON object was expected."
	case errors.Is(err, io.ErrUnexpectedEOF):
		p.Detail = "The JSON body ends too soon."
	case errors.As(err, &syn):
		p.Detail = fmt.Sprintf("The body is not valid JSON (at byte %d).", syn.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			p.Detail = "The body must be a JSON object."
			break
		}
		p.Detail = "A field has the wrong type."
		p.Errors = []sim.FieldError{{Field: field, Detail: "must be " + typeWord(typ)}}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		p.Detail = "The body has a field this endpoint does not know."
		p.Errors = []sim.FieldError{{Field: name, Detail: "is not a field of this request"}}
	}
	return p
}

func typeWord(e *json.UnmarshalTypeError) string {
	switch e.Type.Kind().String() {
	case "int", "int64", "int32":
		if e.Value == "number" || strings.HasPrefix(e.Value, "number ") {
			return "a whole number within range"
		}
		return "a whole number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "struct", "map":
		return "a JSON object"
	case "slice", "array":
		return "a JSON array"
	}
	return "of type " + e.Type.String()
}
