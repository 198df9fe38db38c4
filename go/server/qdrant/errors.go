package qdrant

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/strata-db/strata/go/errkind"
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
	// ErrNotFound marks an unknown route or point. 404.
	ErrNotFound = errors.New("qdrant: not found")
)

func badRequestf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}

func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// status maps an error to the HTTP status Qdrant answers it with: the
// errors only the doors make first, then the engine's kind (see package
// errkind), one case each. 500 is left for bugs, damaged files and
// unexplained I/O errors.
func status(err error) int {
	var tooLarge *http.MaxBytesError
	var refused *guard.Error
	switch {
	case errors.As(err, &refused):
		return refused.Status
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrBadRequest), errors.Is(err, registry.ErrBadName):
		return http.StatusBadRequest
	case errors.Is(err, registry.ErrUnknownCollection), errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	}
	return statusOfKind(errkind.Of(err))
}

// statusOfKind is the Qdrant door's answer to each kind of engine error;
// bad input is 400, as Qdrant answers it.
func statusOfKind(k errkind.Kind) int {
	switch k {
	case errkind.Invalid, errkind.Type:
		return http.StatusBadRequest
	case errkind.TooLarge:
		return http.StatusRequestEntityTooLarge
	case errkind.NotFound, errkind.NoFile, errkind.Closed:
		return http.StatusNotFound
	case errkind.Exists, errkind.Locked:
		return http.StatusConflict
	case errkind.Failed, errkind.Exhausted, errkind.ReadOnly, errkind.Permission:
		return http.StatusServiceUnavailable
	case errkind.NoSpace:
		return http.StatusInsufficientStorage
	case errkind.Corrupt, errkind.IO, errkind.Internal:
		return http.StatusInternalServerError
	}
	return http.StatusInternalServerError
}
