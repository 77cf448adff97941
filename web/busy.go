package web

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"idemlab/sim"
)

// DefaultMaxRequests is how many requests the server works on at once,
// live streams apart (they have their own limit).
const DefaultMaxRequests = 2048

// capRequests answers 503 with Retry-After, the limit named, when the
// server already works on max requests: a flood of slow charges from one
// script cannot take the memory and the files of everyone else's.
func capRequests(max int) echo.MiddlewareFunc {
	var working atomic.Int64
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if strings.HasSuffix(c.Request().URL.Path, "/events") {
				return next(c)
			}
			if working.Add(1) > int64(max) {
				working.Add(-1)
				return sim.Busy("max-requests", time.Second, "max-requests", max)
			}
			defer working.Add(-1)
			return next(c)
		}
	}
}
