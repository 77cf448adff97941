package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/sim/ledger"
)

const labKey = "lab"

// withLab loads the lab named by the :lab path parameter, or answers 404.
func withLab(h *house.House) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			l, err := h.Labs.Lab(c.Request().Context(), c.Param("lab"))
			if err != nil {
				return err
			}
			c.Set(labKey, l)
			return next(c)
		}
	}
}

func labOf(c echo.Context) *labs.Lab { return c.Get(labKey).(*labs.Lab) }

// healthWait is how long /healthz waits for the ledger to take its write.
const healthWait = 2 * time.Second

// handleHealth answers 200 when the ledger can be written now, 503 when not
// (a full disk, a writer stuck): what a load balancer needs to know.
func handleHealth(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), healthWait)
		defer cancel()
		if err := h.Health(ctx); err != nil {
			c.Response().Header().Set("Retry-After", "5")
			return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "detail": "The ledger cannot be written."})
		}
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	}
}

// handleDeleteLab removes a private lab and everything in it.
func handleDeleteLab(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := h.Labs.Delete(c.Request().Context(), c.Param("lab")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

func handleCreateLab(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		l, err := h.Labs.CreatePrivate(c.Request().Context())
		if err != nil {
			return err
		}
		url := "/labs/" + l.ID
		c.Response().Header().Set(echo.HeaderLocation, url)
		return c.JSON(http.StatusCreated, map[string]string{"id": l.ID, "url": url})
	}
}

func handleGetSettings() echo.HandlerFunc {
	return func(c echo.Context) error {
		return c.JSON(http.StatusOK, labOf(c).Settings())
	}
}

func handlePatchSettings(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var p sim.SettingsPatch
		if err := decodeJSON(c, &p, false); err != nil {
			return err
		}
		s, err := h.Labs.UpdateSettings(c.Request().Context(), labOf(c), p)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, s)
	}
}

// chargeBody is the JSON body of a charge; pointers tell "missing" from zero.
type chargeBody struct {
	OrderID *string `json:"order_id"`
	Amount  *int64  `json:"amount"`
}

// charge checks the body's fields and returns the charge they make, or a
// problem listing every missing or invalid field at once; extra adds the
// errors found in other parts of the request.
func (b chargeBody) charge(extra ...sim.FieldError) (sim.Charge, error) {
	var c sim.Charge
	if b.OrderID != nil {
		c.OrderID = *b.OrderID
	}
	if b.Amount != nil {
		c.Amount = *b.Amount
	}
	fs := extra
	var se *sim.Error
	if err := c.Validate(); errors.As(err, &se) {
		for _, f := range se.Fields {
			if (f.Field == "order_id" && b.OrderID == nil) || (f.Field == "amount" && b.Amount == nil) {
				f = sim.Broke(f.Field, "required")
			}
			fs = append(fs, f)
		}
	}
	if len(fs) > 0 {
		return c, sim.Invalid(fs...)
	}
	return c, nil
}

// handleCharge is the protected endpoint: the server the lessons are about.
func handleCharge(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body chargeBody
		if err := decodeJSON(c, &body, false); err != nil {
			return err
		}
		var keyErrs []sim.FieldError
		var key *string
		switch vals := c.Request().Header.Values(api.HeaderKey); len(vals) {
		case 0:
		case 1:
			k, err := sim.ParseKey(vals[0])
			var se *sim.Error
			if errors.As(err, &se) {
				keyErrs = se.Fields
			} else {
				key = &k
			}
		default:
			keyErrs = []sim.FieldError{sim.Broke("Idempotency-Key", "once")}
		}
		ch, err := body.charge(keyErrs...)
		if err != nil {
			return err
		}
		ch.Key = key
		ch.Direct = c.Request().Header.Get(api.HeaderAttempt) == ""
		l := labOf(c)
		res, err := h.Ledger.Charge(c.Request().Context(), l, ch)
		if sim.ErrorCode(err) == sim.ECrashed {
			// The server "dies" with the request in its hands: the
			// connection drops and no answer, not even a 5xx, goes out.
			panic(http.ErrAbortHandler)
		}
		if err != nil {
			return err
		}
		return chargeAnswer(c, h, l, ch, res)
	}
}

// chargeAnswer sends the answer the contract gives the charge's result.
func chargeAnswer(c echo.Context, h *house.House, l *labs.Lab, ch sim.Charge, res ledger.Result) error {
	var st sim.Stored
	switch {
	case res.Replay != nil:
		st = *res.Replay
		c.Response().Header().Set(api.HeaderReplayed, "true")
	case res.Payment != nil:
		st = api.Charged(l.ID, *res.Payment)
	default:
		st = api.Duplicate(ch.Key)
	}
	if st.Location != "" {
		c.Response().Header().Set(echo.HeaderLocation, st.Location)
	}
	if res.Payment == nil {
		return c.Blob(st.Status, echo.MIMEApplicationJSON, st.Body)
	}
	// A new payment may have a message in the outbox: the relay starts
	// once the answer is sent, so the email never shares its time.
	err := c.Blob(st.Status, echo.MIMEApplicationJSON, st.Body)
	c.Response().Flush()
	h.Notify.WakeRelay()
	return err
}

// intParam reads an optional integer query parameter within [lo, hi].
func intParam(c echo.Context, name string, def, lo, hi int, fs *[]sim.FieldError) int {
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

func handlePayments(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var fs []sim.FieldError
		limit := intParam(c, "limit", 100, 1, 1000, &fs)
		offset := intParam(c, "offset", 0, 0, 1<<31-1, &fs)
		if len(fs) > 0 {
			return sim.Invalid(fs...)
		}
		ctx, l := c.Request().Context(), labOf(c)
		t, err := h.Ledger.Totals(ctx, l)
		if err != nil {
			return err
		}
		ps, err := h.Ledger.Payments(ctx, l, limit, offset)
		if err != nil {
			return err
		}
		count, total := t.Payments, t.Total
		return c.JSON(http.StatusOK, struct {
			Payments []sim.Payment `json:"payments"`
			Count    int64         `json:"count"` // of the whole ledger
			Total    int64         `json:"total"` // sum of the whole ledger
		}{ps, count, total})
	}
}

func handlePayment(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := strconv.ParseInt(c.Param("id"), 10, 64)
		if err != nil {
			return sim.Errorf(sim.ENotFound, "There is no payment %q in this lab.", c.Param("id"))
		}
		p, err := h.Ledger.Payment(c.Request().Context(), labOf(c), id)
		if err != nil {
			return err
		}
		b, err := json.Marshal(p) // the same bytes as the charge's 201 answer
		if err != nil {
			return err
		}
		return c.JSONBlob(http.StatusOK, b)
	}
}

func handleOperations(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var fs []sim.FieldError
		limit := intParam(c, "limit", 20, 1, 100, &fs)
		if len(fs) > 0 {
			return sim.Invalid(fs...)
		}
		ops, err := h.Client.Operations(c.Request().Context(), labOf(c), limit)
		if err != nil {
			return err
		}
		if ops == nil {
			ops = []sim.Operation{}
		}
		return c.JSON(http.StatusOK, map[string]any{"operations": ops})
	}
}

func handleStartOperation(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body struct {
			OrderID *string  `json:"order_id"`
			Amount  *int64   `json:"amount"`
			Fate    sim.Fate `json:"fate"`
			Method  string   `json:"method"` // POST (default), PUT, DELETE
		}
		if err := decodeJSON(c, &body, false); err != nil {
			return err
		}
		ch, err := chargeBody{OrderID: body.OrderID, Amount: body.Amount}.charge()
		if err != nil {
			return err
		}
		l := labOf(c)
		op, err := h.Client.Start(c.Request().Context(), l, sim.OperationRequest{OrderID: ch.OrderID, Amount: ch.Amount, Fate: body.Fate, Method: body.Method})
		if err != nil {
			return err
		}
		c.Response().Header().Set(echo.HeaderLocation, "/api/v1/labs/"+l.ID+"/operations/"+op.ID)
		return c.JSON(http.StatusCreated, op)
	}
}

func handleOperation(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		op, err := h.Client.Operation(c.Request().Context(), labOf(c), c.Param("op"))
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, op)
	}
}

func handleRetry(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		body := struct {
			WithKey *bool    `json:"with_key"`
			Fate    sim.Fate `json:"fate"`
		}{}
		if err := decodeJSON(c, &body, true); err != nil {
			return err
		}
		withKey := body.WithKey == nil || *body.WithKey
		op, err := h.Client.Retry(c.Request().Context(), labOf(c), c.Param("op"), withKey, body.Fate)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, op)
	}
}

func handleRace(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		var body struct {
			Parallel *int `json:"parallel"`
		}
		if err := decodeJSON(c, &body, false); err != nil {
			return err
		}
		if body.Parallel == nil {
			return sim.Invalid(sim.Broke("parallel", "required"))
		}
		op, err := h.Client.Race(c.Request().Context(), labOf(c), c.Param("op"), *body.Parallel)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, op)
	}
}

func handleReset(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := h.Labs.Reset(c.Request().Context(), labOf(c)); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}
