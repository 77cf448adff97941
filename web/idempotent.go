package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/idempotency"
)

// Limits of the idempotency records kept for the lab's own API.
const (
	apiKeyTTL  = 24 * time.Hour
	apiKeyLock = 10 * time.Minute // an automatic retry loop may run for minutes
)

// idempotent makes one of the lab's own POST endpoints safe to retry: a
// request that carries an Idempotency-Key runs once; a retry with the same
// key and body gets the first 2xx answer again, marked Idempotent-Replayed.
// Requests without a key run as usual.
func idempotent(records *idempotency.Records, log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			vals := c.Request().Header.Values(api.HeaderKey)
			if len(vals) == 0 {
				return next(c)
			}
			if len(vals) > 1 {
				return sim.Invalid(sim.Broke("Idempotency-Key", "once"))
			}
			key, err := sim.ParseKey(vals[0])
			if err != nil {
				return err
			}
			r := c.Request()
			body, err := io.ReadAll(r.Body)
			if err != nil {
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					return newProblem(probTooLarge, "")
				}
				return newProblem(probValidation, "The request body could not be read.")
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			sum := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + "\n" + string(body)))
			claim, err := records.Claim(r.Context(), labOf(c), "api "+c.Path(), key, hex.EncodeToString(sum[:]), apiKeyTTL, apiKeyLock)
			if err != nil {
				return err
			}
			if st := claim.Replay; st != nil {
				h := c.Response().Header()
				h.Set(api.HeaderReplayed, "true")
				if st.Location != "" {
					h.Set(echo.HeaderLocation, st.Location)
				}
				return c.Blob(st.Status, st.ContentType, st.Body)
			}
			rec := &teeWriter{ResponseWriter: c.Response().Writer}
			c.Response().Writer = rec
			// A handler that panics gives the key back on its way up: its
			// retry must not meet a 409 until the lock times out.
			finished := false
			defer func() {
				if !finished {
					if err := claim.Release(r.Context()); err != nil {
						log.Warn("release idempotency claim", "lab", c.Param("lab"), "err", err)
					}
				}
			}()
			err = next(c)
			finished = true
			if err != nil {
				c.Error(err)
			}
			res := c.Response()
			ctx := context.WithoutCancel(r.Context())
			if res.Status >= 200 && res.Status < 300 {
				err = claim.Finish(ctx, sim.Stored{Status: res.Status, Body: rec.buf.Bytes(),
					Location: res.Header().Get(echo.HeaderLocation), ContentType: res.Header().Get(echo.HeaderContentType)})
			} else {
				err = claim.Release(ctx)
			}
			return err
		}
	}
}

// teeWriter keeps a copy of the body it writes.
type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	return w.ResponseWriter.Write(b)
}
