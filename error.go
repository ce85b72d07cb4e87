package quire

import (
	"errors"
	"fmt"
)

// Code classifies an error. httpstatus turns each code into an
// HTTP status in one table, for the API and the UI alike.
type Code string

// Error codes. Append only: clients may match on them.
const (
	EINVALID       Code = "invalid"                // malformed input (400)
	EUNAUTHORIZED  Code = "unauthorized"           // missing or bad credential (401)
	EFORBIDDEN     Code = "forbidden"              // authenticated, not allowed (403)
	ENOTFOUND      Code = "not_found"              // unknown or invisible resource (404)
	ECONFLICT      Code = "conflict"               // wrong state, duplicate (409)
	EPRECONDITION  Code = "precondition"           // If-Match mismatch (412)
	ETOOLARGE      Code = "too_large"              // over a size limit (413)
	EUNPROCESSABLE Code = "unprocessable"          // valid JSON breaking a rule (422)
	ERATELIMIT     Code = "rate_limited"           // too many requests (429)
	EUNAVAILABLE   Code = "unavailable"            // a dependency is down (503)
	ENOSPACE       Code = "insufficient_storage"   // data root full or unwritable (507)
	EINTERNAL      Code = "internal"               // a bug or unexpected failure (500)
	ETIMEOUT       Code = "request_timeout"        // request body arrived too slowly (408)
	EMETHOD        Code = "method_not_allowed"     // the route exists, not with this method (405)
	EMEDIATYPE     Code = "unsupported_media_type" // a body in a format the route does not take (415)
	EREVIEW        Code = "review_required"        // publishing needs an approved review (409)
	EHEADMOVED     Code = "head_moved"             // a verdict on a head the review no longer has (409)
	ELABELPROTECT  Code = "label_protected"        // deleting a protected label needs an owner's override (409)
	ENOPROVIDER    Code = "no_provider"            // a run needs a model provider the operator has not configured (409)
	EPROVIDER      Code = "provider_error"         // the model provider failed or refused a call (502)
	EEVALUATION    Code = "evaluation_required"    // publishing needs a passing evaluation of the draft's head (409)
)

// Codes lists every Code, for documents that enumerate them.
var Codes = []Code{EINVALID, EUNAUTHORIZED, EFORBIDDEN, ENOTFOUND, ECONFLICT, EPRECONDITION, ETOOLARGE,
	EUNPROCESSABLE, ERATELIMIT, EUNAVAILABLE, ENOSPACE, EINTERNAL, ETIMEOUT, EMETHOD, EMEDIATYPE, EREVIEW,
	EHEADMOVED, ELABELPROTECT, ENOPROVIDER, EPROVIDER, EEVALUATION}

// Error is quire's error type. Message is safe to show to a client; Err is
// the underlying cause and is only logged.
type Error struct {
	Code    Code
	Message string
	Details map[string]any
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Message, e.Err)
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithDetail returns e with a machine-readable detail added.
func (e *Error) WithDetail(key string, v any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = v
	return e
}

// ErrorCode returns the code of the first *Error in err's chain, or
// EINTERNAL when there is none.
func ErrorCode(err error) Code {
	if e, ok := errors.AsType[*Error](err); ok { // no allocation, unlike errors.As
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err.
func ErrorMessage(err error) string {
	if e, ok := errors.AsType[*Error](err); ok && e.Code != EINTERNAL {
		return e.Message
	}
	return "internal error"
}

// ErrorDetails returns the details of the first *Error in err's chain.
func ErrorDetails(err error) map[string]any {
	var e *Error
	if errors.As(err, &e) {
		return e.Details
	}
	return nil
}
