package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/sim"
	"idemlab/sim/store"
	"idemlab/views"
)

// The problem types of the API (the contract's): each is answered with its
// status and English title; its page (/problems/{slug}) explains it in the
// reader's language, in the words of views.
var (
	probValidation  = api.ProblemValidation
	probKeyMissing  = api.ProblemKeyMissing
	probKeyReused   = api.ProblemKeyReused
	probConflict    = api.ProblemConflict
	probInFlight    = api.ProblemInFlight
	probNotFound    = api.ProblemNotFound
	probVoteClosed  = api.ProblemVoteClosed
	probMethod      = api.ProblemMethod
	probTooLarge    = api.ProblemTooLarge
	probMediaType   = api.ProblemMediaType
	probCrossSite   = api.ProblemCrossSite
	probForbidden   = api.ProblemForbidden
	probRateLimited = api.ProblemRateLimit
	probBusy        = api.ProblemBusy
	probInternal    = api.ProblemInternal
)

// Problem is an RFC 9457 problem details object.
type Problem struct {
	Type     string           `json:"type"`
	Title    string           `json:"title"`
	Status   int              `json:"status"`
	Detail   string           `json:"detail,omitempty"`
	Instance string           `json:"instance,omitempty"`
	Errors   []sim.FieldError `json:"errors,omitempty"`
	// Limit names the limit reached, for 429 and 503: max-labs,
	// max-inflight, max-streams, max-requests, lab-rate, compare-rate,
	// scenario-rate, streams-per-address, inflight-per-address, labs-per-address;
	// or the part that does not answer: database, kv (Redis), broker.
	Limit string `json:"limit,omitempty"`

	retryAfter int // seconds, for 409, 429 and 503: the Retry-After header
	// said is the detail as words of views, and saidFields each error's,
	// for a page in another language than the JSON's English.
	said       views.Msg
	saidFields []views.Msg
}

// Error makes Problem an error that handlers can return.
func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail) }

func newProblem(t api.ProblemType, detail string) *Problem {
	return &Problem{Type: t.URI(), Title: t.Title, Status: t.Status, Detail: detail}
}

// problemFor maps any error to the problem the client sees: the one place
// where domain errors become HTTP statuses. Internal details never leak.
func problemFor(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	if sim.ErrorCode(err) == sim.EInternal && store.IsUnavailable(err) && !errors.Is(err, context.DeadlineExceeded) {
		// The database down is not a fault of the lab: 503, named, as a
		// charge's is (which the ledger tells itself, with its key's fate).
		err = sim.Unavailable(sim.PartDatabase, 5*time.Second, "db-unavailable")
	}
	var se *sim.Error
	if errors.As(err, &se) {
		var q *Problem
		msg, fields := inEnglish(se)
		switch se.Code {
		case sim.EInvalid:
			q = newProblem(probValidation, msg)
			q.Errors = fields
		case sim.ENotFound:
			q = newProblem(probNotFound, msg)
		case sim.EKeyMissing:
			q = newProblem(probKeyMissing, msg)
		case sim.EKeyReused:
			q = newProblem(probKeyReused, msg)
		case sim.EInFlight:
			q = newProblem(probInFlight, msg)
			q.retryAfter = retrySeconds(se.RetryAfter)
		case sim.EConflict:
			q = newProblem(probConflict, msg)
			q.retryAfter = retrySeconds(se.RetryAfter)
		case sim.EForbidden:
			q = newProblem(probForbidden, msg)
		case sim.EClosed:
			q = newProblem(probVoteClosed, msg)
		case sim.EBusy:
			q = newProblem(probBusy, msg)
			q.Limit = se.Limit
			q.retryAfter = retrySeconds(se.RetryAfter)
		case sim.ELimited:
			q = newProblem(probRateLimited, msg)
			q.Limit = se.Limit
			q.retryAfter = retrySeconds(se.RetryAfter)
		case sim.EUnavailable: // a part down: named by the type, and by limit
			q = newProblem(api.ProblemUnavailable(se.Limit), msg)
			q.Limit = se.Limit
			q.retryAfter = retrySeconds(se.RetryAfter)
		case sim.EUnknown:
			q = newProblem(api.ProblemUnknown, msg)
			q.Limit = se.Limit
			q.retryAfter = retrySeconds(se.RetryAfter)
		default:
			return newProblem(probInternal, "")
		}
		q.said = errorMsg(se)
		for _, f := range se.Fields {
			q.saidFields = append(q.saidFields, ruleMsg(f))
		}
		return q
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return newProblem(probNotFound, "There is nothing at this address.")
		case http.StatusMethodNotAllowed:
			return newProblem(probMethod, "")
		case http.StatusRequestEntityTooLarge:
			return newProblem(probTooLarge, "")
		case http.StatusUnsupportedMediaType:
			return newProblem(probMediaType, "")
		}
		if he.Code >= 400 && he.Code < 500 {
			return &Problem{Type: "about:blank", Title: http.StatusText(he.Code), Status: he.Code}
		}
	}
	return newProblem(probInternal, "")
}

// maxEcho is how many characters of the request a problem repeats at most:
// a 64 KiB scenario code or lab id is not sent back whole.
const maxEcho = 200

// clipped is p for the answer to the request at path: its instance the
// path, and each string that may repeat the request (detail, instance,
// the errors' fields and details) cut to maxEcho characters. p itself,
// and the errors it shares with a domain error, are not changed.
func (p *Problem) clipped(path string) *Problem {
	q := *p
	q.Detail, q.Instance = clip(p.Detail), clip(path)
	if p.Errors != nil {
		q.Errors = make([]sim.FieldError, len(p.Errors))
		for i, f := range p.Errors {
			q.Errors[i] = sim.FieldError{Field: clip(f.Field), Detail: clip(f.Detail)}
		}
	}
	return &q
}

// clip cuts s to maxEcho characters, the last an ellipsis when cut; bytes
// that are not UTF-8 count one each.
func clip(s string) string { return clipTo(s, maxEcho) }

// clipTo cuts s to most characters, the last an ellipsis when cut.
func clipTo(s string, most int) string {
	if len(s) <= most || utf8.RuneCountInString(s) <= most {
		return s
	}
	n := 0
	for i := range s {
		if n == most-1 {
			return strings.ToValidUTF8(s[:i], "\uFFFD") + "…"
		}
		n++
	}
	return s
}

// retrySeconds is a Retry-After of d: whole seconds, rounded up, at least 1
// (0 would invite a retry at once).
func retrySeconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }

// handleError is Echo's error handler: every error becomes a problem+json
// answer, or its page for a browser (wantsPage), logged when it is the
// server's fault.
func handleError(log func(c echo.Context, err error)) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		if c.Request().Context().Err() != nil && errors.Is(err, context.Canceled) {
			return // the client has gone: there is nobody to answer, and nothing went wrong
		}
		p := problemFor(err)
		if p.Status >= 500 && p.Status != http.StatusServiceUnavailable { // a busy server is not a fault
			log(c, err)
		}
		p = p.clipped(c.Request().URL.Path)
		h := c.Response().Header()
		if p.retryAfter > 0 {
			h.Set("Retry-After", strconv.Itoa(p.retryAfter))
		}
		addVary(h, "Accept")
		if wantsPage(c.Request()) && errorPage(c, p) == nil {
			return
		}
		if c.Request().Header.Get("HX-Request") == "true" && errorNotice(c, p) == nil {
			return
		}
		h.Set(echo.HeaderContentType, "application/problem+json")
		if c.Request().Method == http.MethodHead {
			c.NoContent(p.Status)
			return
		}
		c.JSON(p.Status, p)
	}
}
