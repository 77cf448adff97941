package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

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
// type must be JSON, unknown fields and trailing data are refused, and every
// failure is a problem that names what is wrong. An empty body is allowed
// only when optional is set (dst then keeps its zero value).
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
	if len(strings.TrimSpace(string(raw))) == 0 && optional {
		return nil
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return newProblem(probMediaType, "Send the body as JSON with Content-Type: application/json.")
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return jsonProblem(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return newProblem(probValidation, "The body must hold exactly one JSON object; there is more after it.")
	}
	return nil
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
