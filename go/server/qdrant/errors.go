package qdrant

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/server/guard"
	"github.com/strata-db/strata/go/server/registry"
)

var (
	// ErrBadRequest marks a request Qdrant itself would refuse: malformed
	// JSON, wrong types, bad values. 400.
	ErrBadRequest = errors.New("qdrant: bad request")
	// ErrUnsupported marks a valid Qdrant request naming a construct this
	// door does not translate (named vectors, geo filters, UUID ids, ...).
	// 400, with the construct named, rather than a wrong answer.
	ErrUnsupported = fmt.Errorf("%w: not supported by strata's Qdrant API", ErrBadRequest)
	// ErrUnauthorized marks a request without the right api-key. 401.
	ErrUnauthorized = errors.New("qdrant: missing or wrong api-key")
	// ErrNotFound marks an unknown route or point. 404.
	ErrNotFound = errors.New("qdrant: not found")
)

func badRequestf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// status maps an error to the HTTP status Qdrant answers it with; anything
// unrecognised is a bug and a 500.
func status(err error) int {
	var tooLarge *http.MaxBytesError
	var refused *guard.Error
	switch {
	case errors.As(err, &refused):
		return refused.Status
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrUnauthorized):
		return http.StatusUnauthorized
	case errors.Is(err, registry.ErrBadName):
		return http.StatusBadRequest
	case errors.Is(err, registry.ErrUnknownCollection), errors.Is(err, collection.ErrClosed),
		errors.Is(err, collection.ErrNotFound), errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, collection.ErrExists), errors.Is(err, collection.ErrLocked):
		return http.StatusConflict
	case errors.Is(err, ErrBadRequest), errors.Is(err, batch.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, collection.ErrFailed):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
