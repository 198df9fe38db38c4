package guard

import (
	"fmt"
	"net/http"
)

// Error is a refusal by the guard: the status to answer with, the native
// door's error code, and a message that says how to pass.
type Error struct {
	Status int
	Code   string
	msg    string
}

func (e *Error) Error() string { return "guard: " + e.msg }

// Message is the refusal without the package prefix.
func (e *Error) Message() string { return e.msg }

// Error codes of the native door's error bodies. Clients branch on these,
// so do not change them.
const (
	CodeForbidden     = "forbidden"
	CodeMediaType     = "unsupported_media_type"
	CodeUnauthorized  = "unauthorized"
	CodeTooLarge      = "payload_too_large"
	CodeLimitExceeded = "limit_exceeded"
)

func refuse(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, msg: fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) *Error {
	return refuse(http.StatusForbidden, CodeForbidden, format, args...)
}

func limitExceeded(format string, args ...any) *Error {
	return refuse(http.StatusUnprocessableEntity, CodeLimitExceeded, format, args...)
}
