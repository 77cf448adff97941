package web

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/house"
	"idemlab/sim/labs"
	"idemlab/sim/ledger"
)

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
	for _, f := range fieldsOf(c.Validate()) {
		if (f.Field == "order_id" && b.OrderID == nil) || (f.Field == "amount" && b.Amount == nil) {
			f = sim.Broke(f.Field, "required")
		}
		fs = append(fs, f)
	}
	if len(fs) > 0 {
		return c, sim.Invalid(fs...)
	}
	return c, nil
}

// fieldsOf is what a validation error says, field by field (nil: none).
// Its variable is made only for an error: the usual request has none.
func fieldsOf(err error) []sim.FieldError {
	if err == nil {
		return nil
	}
	var se *sim.Error
	if errors.As(err, &se) {
		return se.Fields
	}
	return nil
}

// handleCharge is the protected endpoint: the server the lessons are about.
func handleCharge(h *house.House) echo.HandlerFunc {
	return func(c echo.Context) error {
		l := labOf(c)
		if rps := l.Settings().CapacityRPS; rps > 0 { // the server's capacity: past it, nothing is read
			if ok, wait := l.Capacity().Admit(h.Clock.Now(), rps); !ok {
				return sim.Busy("capacity", wait, "capacity", rps)
			}
		}
		var body chargeBody
		if err := decodeCharge(c, &body); err != nil {
			return err
		}
		var keyErrs []sim.FieldError
		var key *string
		switch vals := c.Request().Header.Values(api.HeaderKey); len(vals) {
		case 0:
		case 1:
			k, err := sim.ParseKey(vals[0])
			if keyErrs = fieldsOf(err); err == nil {
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
		ctx := c.Request().Context()
		if token := c.Request().Header.Get(api.HeaderStepped); token != "" {
			steps, err := h.Stepped.Racer(ctx, token, l.ID)
			if err != nil {
				return err
			}
			ctx = ledger.WithSteps(ctx, steps)
		}
		res, err := h.Ledger.Charge(ctx, l, ch)
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

// The values of a charge's answer's headers that never change, shared by
// every answer (canonical names; Set or Add on them makes a new slice).
var (
	jsonType     = []string{echo.MIMEApplicationJSON}
	replayedTrue = []string{"true"}
)

// chargeAnswer sends the answer the contract gives the charge's result.
func chargeAnswer(c echo.Context, h *house.House, l *labs.Lab, ch sim.Charge, res ledger.Result) error {
	var st sim.Stored
	hd := c.Response().Header()
	hd[echo.HeaderContentType] = jsonType // Blob sets it no more
	switch {
	case res.Replay != nil:
		st = *res.Replay
		hd[api.HeaderReplayed] = replayedTrue
	case res.Answer != nil:
		st = *res.Answer
	case res.Payment != nil:
		st = api.Charged(l.ID, *res.Payment)
	default:
		st = api.Duplicate(ch.Key)
	}
	if st.Location != "" {
		hd[echo.HeaderLocation] = []string{st.Location}
	}
	if res.Payment == nil {
		return c.Blob(st.Status, echo.MIMEApplicationJSON, st.Body)
	}
	// A new payment may have a message in the outbox: the relay starts
	// once the answer is sent, so the email never shares its time. Sent
	// with its length, the answer goes in one write, not as chunks.
	c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(st.Body)))
	err := c.Blob(st.Status, echo.MIMEApplicationJSON, st.Body)
	c.Response().Flush()
	if res.Queued {
		h.Notify.WakeRelay()
	}
	return err
}
