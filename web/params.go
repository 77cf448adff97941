package web

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
)

// intParam reads an optional integer query parameter within [lo, hi],
// given once: of ?limit=1&limit=2, one reader takes the first, another the
// last.
func intParam(c echo.Context, name string, def, lo, hi int, fs *[]sim.FieldError) int {
	if len(c.QueryParams()[name]) > 1 {
		*fs = append(*fs, sim.Broke(name, "once"))
		return def
	}
	v := c.QueryParam(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		*fs = append(*fs, sim.Broke(name, "range", lo, hi))
	}
	return n
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
