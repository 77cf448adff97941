package web

import "github.com/labstack/echo/v4"

// nextKey is where prebuilt keeps the handler a request goes on to.
const nextKey = "idemlab.next"

// prebuilt is ms, in order, as one middleware whose chain is built once, at
// start: Echo applies each middleware it is given (Use) to the route's
// handler anew for every request, a closure each. The chain ends in a
// handler that goes on to the request's own, which prebuilt keeps in the
// request's store (where withLab keeps the lab: the same map).
func prebuilt(ms ...echo.MiddlewareFunc) echo.MiddlewareFunc {
	h := echo.HandlerFunc(func(c echo.Context) error { return c.Get(nextKey).(echo.HandlerFunc)(c) })
	for i := len(ms) - 1; i >= 0; i-- {
		h = ms[i](h)
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			c.Set(nextKey, next)
			return h(c)
		}
	}
}
