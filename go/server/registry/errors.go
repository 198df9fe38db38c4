package registry

import (
	"errors"
	"fmt"

	"github.com/strata-db/strata/go/collection"
)

var (
	// ErrUnknownCollection marks a collection name with no collection.
	ErrUnknownCollection = errors.New("registry: no such collection")
	// ErrBadName marks a collection name outside ^[A-Za-z0-9_-]{1,64}$.
	ErrBadName = errors.New("registry: bad collection name: collection names are 1-64 characters of A-Z a-z 0-9 _ -")
	// ErrUnavailable marks a collection that exists but is not open: it
	// would not open, or it is being re-opened. It wraps
	// collection.ErrFailed, so doors answer it as they answer a failed
	// collection (503).
	ErrUnavailable = fmt.Errorf("registry: collection unavailable: %w", collection.ErrFailed)
	// ErrClosed marks calls on a closed registry.
	ErrClosed = fmt.Errorf("registry: closed: %w", collection.ErrClosed)
)
