package sim

import (
	"errors"
	"fmt"
	"time"
)

// Code classifies a domain error; the web layer maps each code to one HTTP
// status and problem type, in one place.
type Code string

// The error codes of the lab.
const (
	EInvalid     Code = "invalid"     // the request breaks a rule; Fields say which
	ENotFound    Code = "not-found"   // no such lab, operation or payment
	EKeyMissing  Code = "key-missing" // the protection needs an Idempotency-Key and none came
	EKeyReused   Code = "key-reused"  // the key was first used with a different request
	EInFlight    Code = "in-flight"   // the key's first request is still being processed
	EConflict    Code = "conflict"    // the transaction lost a race the database caught (40001); RetryAfter says when to retry
	EForbidden   Code = "forbidden"   // the request is understood and refused (the shared lab cannot be deleted)
	EClosed      Code = "closed"      // the vote it is for is closed: the question was revealed
	ECrashed     Code = "crashed"     // the server died in the middle (server_fault): no answer at all
	EBusy        Code = "busy"        // a server-wide limit is reached; Limit names it, RetryAfter says when to come back
	ELimited     Code = "limited"     // one client address holds its share of a limit; Limit names it, RetryAfter says when
	EUnavailable Code = "unavailable" // a part the lab depends on does not answer; Limit names it (PartDatabase, PartKV, PartBroker), RetryAfter says when to come back
	EUnknown     Code = "unknown"     // a part stopped answering in the middle: whether the work was done is not known; Limit names the part
	EInternal    Code = "internal"    // anything else: never shown to users in detail
)

// FieldError names one invalid field of a request and the rule it broke.
// The words are not here: Rule and Args key them in the views' catalogs
// (rule.<Rule>), in each language; the web layer fills Detail in English
// for the API.
type FieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
	Rule   string `json:"-"`
	Args   []any  `json:"-"`
}

// Broke returns the FieldError of a field that broke a rule.
func Broke(field, rule string, args ...any) FieldError {
	return FieldError{Field: field, Rule: rule, Args: args}
}

// Error is the lab's one error type. Its words are not here either: Key
// names the message (err.<Key> in the views' catalogs), Args fill it.
type Error struct {
	Code       Code
	Key        string
	Args       []any
	Fields     []FieldError
	RetryAfter time.Duration // for EInFlight, EConflict, EBusy, ELimited and EUnavailable: when to try again
	Limit      string        // for EBusy and ELimited: the limit reached (max-labs, max-inflight, ...); for EUnavailable, the part down
}

// Error says the error for logs and tests; people read its words from
// the views' catalogs, by Key.
func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s%v", e.Code, e.Key, e.Args)
	for _, f := range e.Fields {
		s += fmt.Sprintf(" (%s: %s%v%s)", f.Field, f.Rule, f.Args, f.Detail)
	}
	return s
}

// Errorf returns an *Error with the given code, message key and arguments.
func Errorf(code Code, key string, args ...any) *Error {
	return &Error{Code: code, Key: key, Args: args}
}

// Invalid returns an EInvalid error listing the given field errors.
func Invalid(fields ...FieldError) *Error {
	return &Error{Code: EInvalid, Key: "invalid", Fields: fields}
}

// ErrorCode returns the code of err, or EInternal when err is not an *Error.
func ErrorCode(err error) Code {
	if err == nil {
		return EInternal
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// Busy returns an EBusy error for the named server-wide limit.
func Busy(limit string, retryAfter time.Duration, key string, args ...any) *Error {
	return &Error{Code: EBusy, Key: key, Args: args, Limit: limit, RetryAfter: retryAfter}
}

// Limited returns an ELimited error for the named share of one client
// address: the server has room, but not for this address.
func Limited(limit string, retryAfter time.Duration, key string, args ...any) *Error {
	return &Error{Code: ELimited, Key: key, Args: args, Limit: limit, RetryAfter: retryAfter}
}

// The parts the lab depends on, as an EUnavailable error names them.
const (
	PartDatabase = "database" // the ledger's database: SQLite or PostgreSQL (-db)
	PartKV       = "kv"       // the key-value store of protection set-nx: Redis (-redis)
	PartBroker   = "broker"   // the message broker of notify "queue": NATS (-nats)
)

// Unavailable returns an EUnavailable error: the part does not answer.
func Unavailable(part string, retryAfter time.Duration, key string, args ...any) *Error {
	return &Error{Code: EUnavailable, Key: key, Args: args, Limit: part, RetryAfter: retryAfter}
}

// Unknown returns an EUnknown error: the part stopped answering in the
// middle, and what it did is not known.
func Unknown(part string, retryAfter time.Duration, key string, args ...any) *Error {
	return &Error{Code: EUnknown, Key: key, Args: args, Limit: part, RetryAfter: retryAfter}
}

// NoLab is the error of a lab that does not exist, or no longer does.
func NoLab(id string) error { return Errorf(ENotFound, "no-lab", Clip(id)) }

// Clip shortens text taken from a request to at most 200 bytes (on a rune
// boundary), so that an answer never echoes a huge input back.
func Clip(s string) string {
	const most = 200
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// Quoted lists values as a message shows them: "a", "b", "c".
func Quoted(vs []string) string { return quoted(vs) }

// quoted lists values as a message shows them: "a", "b", "c".
func quoted(vs []string) string {
	out := ""
	for i, v := range vs {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%q", v)
	}
	return out
}
