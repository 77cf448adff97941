package web

import (
	"errors"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/labstack/echo/v4"
)

// decodeCharge decodes a charge's body. The usual one, an object of
// "order_id" (a string) and "amount" (a whole number), each once and in
// either order, is read token by token, without reflection: the charge is
// the lab's hot path. Any other body, and any doubt, goes to the strict
// decoder, which alone says what is wrong: the answers are the same.
func decodeCharge(c echo.Context, b *chargeBody) error {
	return decodeWithFast(c, b, func(raw []byte) bool { return fastCharge(raw, b) })
}

// fastCharge reads raw into b when it is the usual charge body, and
// reports whether it was; b is untouched otherwise.
func fastCharge(raw []byte, b *chargeBody) bool {
	d := borrow(raw, strictJSON)
	defer d.giveBack()
	dec := d.dec
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	var (
		order  string
		amount int64
		seen   int
	)
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil || name.Kind() != '"' {
			return false
		}
		switch name.String() {
		case "order_id":
			v, err := dec.ReadToken()
			if err != nil || v.Kind() != '"' || seen&1 != 0 {
				return false
			}
			order, seen = v.String(), seen|1
		case "amount":
			v, err := dec.ReadValue()
			if err != nil || seen&2 != 0 {
				return false
			}
			n, ok := wholeNumber(v)
			if !ok {
				return false
			}
			amount, seen = n, seen|2
		default:
			return false
		}
	}
	if _, err := dec.ReadToken(); err != nil || seen != 3 { // '}'
		return false
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return false
	}
	b.OrderID, b.Amount = &order, &amount
	return true
}

// wholeNumber is a JSON number written as a whole number (digits, a sign)
// within ±(2^53 − 1); false for anything else.
func wholeNumber(v jsontext.Value) (int64, bool) {
	if len(v) == 0 || v.Kind() != '0' {
		return 0, false
	}
	for i, c := range v {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n > maxExact || n < -maxExact {
		return 0, false
	}
	return n, true
}
