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
	EInvalid    Code = "invalid"     // the request breaks a rule; Fields say which
	ENotFound   Code = "not-found"   // no such lab, operation or payment
	EKeyMissing Code = "key-missing" // the protection needs an Idempotency-Key and none came
	EKeyReused  Code = "key-reused"  // the key was first used with a different request
	EInFlight   Code = "in-flight"   // the key's first request is still being processed
	EForbidden  Code = "forbidden"   // the request is understood and refused (the shared lab cannot be deleted)
	EBusy       Code = "busy"        // a server-wide limit is reached; Limit names it, RetryAfter says when to come back
	EInternal   Code = "internal"    // anything else: never shown to users in detail
)

// FieldError names one invalid field of a request and why.
type FieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// Error is the lab's one error type. Message is safe to show to users.
type Error struct {
	Code       Code
	Message    string
	Fields     []FieldError
	RetryAfter time.Duration // for EInFlight and EBusy: when to try again
	Limit      string        // for EBusy: the limit reached (max-labs, max-inflight, ...)
}

func (e *Error) Error() string {
	if len(e.Fields) > 0 {
		return fmt.Sprintf("%s: %s (%s: %s)", e.Code, e.Message, e.Fields[0].Field, e.Fields[0].Detail)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code and message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EInvalid error listing the given field errors.
func Invalid(fields ...FieldError) *Error {
	return &Error{Code: EInvalid, Message: "The request is not valid.", Fields: fields}
}

// ErrorCode returns the code of err, or EInternal when err is not an *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// Busy returns an EBusy error for the named server-wide limit.
func Busy(limit string, retryAfter time.Duration, format string, args ...any) *Error {
	return &Error{Code: EBusy, Message: fmt.Sprintf(format, args...), Limit: limit, RetryAfter: retryAfter}
}
