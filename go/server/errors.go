package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/errkind"
	"github.com/strata-db/strata/go/server/guard"
	"github.com/strata-db/strata/go/server/registry"
)

var (
	// ErrBadRequest marks a body that is not JSON of the route's shape:
	// malformed or truncated JSON, a field of the wrong type, an unknown
	// field. Answered with 400.
	ErrBadRequest = errors.New("server: bad request")
	// ErrUnknownCollection marks a collection name with no collection. 404.
	ErrUnknownCollection = registry.ErrUnknownCollection
	// ErrBadName marks a collection name outside ^[A-Za-z0-9_-]{1,64}$. 400.
	ErrBadName = registry.ErrBadName
	// ErrMethod marks a method the route does not serve. 405.
	ErrMethod = errors.New("server: method not allowed")
	// ErrNoRoute marks a path the server does not serve. 404.
	ErrNoRoute = errors.New("server: no such route")
	// ErrClosing marks requests that arrive while the server shuts down. 503.
	ErrClosing = errors.New("server: shutting down")
)

// Error codes, the "code" of every error body. Clients branch on these, so
// do not change them.
const (
	CodeBadRequest         = "bad_request"
	CodeInvalid            = "invalid_argument"
	CodeUnauthorized       = "unauthorized"
	CodeCollectionNotFound = "collection_not_found"
	CodePointNotFound      = "point_not_found"
	CodeNoRoute            = "not_found"
	CodeMethod             = "method_not_allowed"
	CodeExists             = "collection_exists"
	CodeTooLarge           = "payload_too_large"
	CodeFailed             = "collection_failed"
	CodeUnavailable        = "unavailable"
	CodeInternal           = "internal"
	// The server's environment, not the request: an operator can fix
	// them. 507 for a full disk, 503 for the others.
	CodeNoSpace    = "insufficient_storage"
	CodeExhausted  = "resource_exhausted"
	CodeReadOnly   = "read_only"
	CodePermission = "permission_denied"
)

// classify maps an error to its HTTP status and code: the errors only this
// door makes first (none of them wraps another of a different status),
// then the engine's kind (see package errkind), one case each. 500 is left
// for bugs, damaged files and unexplained I/O errors.
func classify(err error) (int, string) {
	var tooLarge *http.MaxBytesError
	var refused *guard.Error
	switch {
	case errors.As(err, &refused):
		return refused.Status, refused.Code
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge, CodeTooLarge
	case errors.Is(err, ErrBadRequest), errors.Is(err, registry.ErrBadName):
		return http.StatusBadRequest, CodeBadRequest
	case errors.Is(err, ErrUnknownCollection):
		return http.StatusNotFound, CodeCollectionNotFound
	case errors.Is(err, ErrNoRoute):
		return http.StatusNotFound, CodeNoRoute
	case errors.Is(err, ErrMethod):
		return http.StatusMethodNotAllowed, CodeMethod
	case errors.Is(err, ErrClosing):
		return http.StatusServiceUnavailable, CodeUnavailable
	}
	return statusOfKind(errkind.Of(err))
}

// statusOfKind is the native door's answer to each kind of engine error.
func statusOfKind(k errkind.Kind) (int, string) {
	switch k {
	case errkind.Invalid, errkind.Type:
		return http.StatusUnprocessableEntity, CodeInvalid
	case errkind.TooLarge:
		return http.StatusRequestEntityTooLarge, CodeTooLarge
	case errkind.NotFound:
		return http.StatusNotFound, CodePointNotFound
	case errkind.NoFile, errkind.Closed:
		// Closed: the request raced with a DELETE of its collection.
		return http.StatusNotFound, CodeCollectionNotFound
	case errkind.Exists, errkind.Locked:
		return http.StatusConflict, CodeExists
	case errkind.Failed:
		return http.StatusServiceUnavailable, CodeFailed
	case errkind.NoSpace:
		return http.StatusInsufficientStorage, CodeNoSpace
	case errkind.Exhausted:
		return http.StatusServiceUnavailable, CodeExhausted
	case errkind.ReadOnly:
		return http.StatusServiceUnavailable, CodeReadOnly
	case errkind.Permission:
		return http.StatusServiceUnavailable, CodePermission
	case errkind.Corrupt, errkind.IO, errkind.Internal:
		return http.StatusInternalServerError, CodeInternal
	}
	return http.StatusInternalServerError, CodeInternal
}

func badRequestf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", batch.ErrInvalid, fmt.Sprintf(format, args...))
}

func truncateForMessage(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
