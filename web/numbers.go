package web

import (
	"bytes"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// maxExact is the largest whole number every JSON reader holds exactly: a
// JavaScript number is a float64.
const maxExact = 1<<53 - 1

// errInexact is a number that JSON readers disagree about.
var errInexact = errors.New("a number beyond what every JSON reader holds exactly")

// exactNumbers sees every JSON number before it is stored, wherever it is
// (a field, an array, a value of type any): the library has no option to
// refuse whole numbers beyond ±(2^53−1), nor those no float64 holds
// (1e400). A whole-number field takes a number that is a whole number
// however it is spelled (1e3, 1000.0), as every JSON reader reads it; 1.5
// stays a fraction, which such a field refuses. It stores the number
// first, as the library does without this function (with it, the number
// would come back here), so a number that does not fit its field is a
// wrong type; of the request's options only the merging matters to one
// number.
var exactNumbers = json.UnmarshalFromFunc(func(dec *jsontext.Decoder, v any) error {
	if dec.PeekKind() != '0' {
		return json.SkipFunc
	}
	lit, err := dec.ReadValue()
	if err != nil {
		return err
	}
	num := []byte(lit)
	if bytes.ContainsAny(lit, ".eE") && wholeField(v) { // a plain integer is its own spelling
		if n, ok := wholeOf(string(lit)); ok {
			num = n
		}
	}
	if err := json.Unmarshal(num, v, jsonv1.MergeWithLegacySemantics(true)); err != nil {
		return err
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if whole := !bytes.ContainsAny(num, ".eE"); err != nil || whole && (f > maxExact || f < -maxExact) {
		return errInexact
	}
	return nil
})

// wholeField reports whether v points (through pointers) to an integer.
func wholeField(v any) bool {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// wholeOf is the JSON number lit written as a plain whole number ("1e3",
// "1000.0" and "0.1e4" are "1000"), exactly, without floating point; ok is
// false when lit is not a whole number, or has more digits than any
// integer type holds.
func wholeOf(lit string) (n []byte, ok bool) {
	const most = 20 // digits of the largest uint64
	mant, exps := lit, ""
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		mant, exps = lit[:i], lit[i+1:]
	}
	intPart, frac, _ := strings.Cut(strings.TrimPrefix(mant, "-"), ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return []byte("0"), true
	}
	exp := 0
	if exps != "" {
		e, err := strconv.Atoi(exps) // takes a sign; too many digits is an error
		if err != nil || e > most || e < -len(mant) {
			return nil, false
		}
		exp = e
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed) - len(frac)
	if exp < 0 || len(trimmed)+exp > most {
		return nil, false
	}
	out := trimmed + strings.Repeat("0", exp)
	if strings.HasPrefix(mant, "-") {
		out = "-" + out
	}
	return []byte(out), true
}
