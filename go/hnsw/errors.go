package hnsw

import (
	"fmt"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/errkind"
)

var (
	// ErrInvalidArgument marks errors caused by the caller's input (wrong
	// dimension, non-finite values, bad k, duplicate ids). It wraps
	// batch.ErrInvalid. The index is unchanged when an operation fails with it.
	ErrInvalidArgument = fmt.Errorf("hnsw: %w", batch.ErrInvalid)
	// ErrNotFound marks operations on ids the index does not hold.
	ErrNotFound = errkind.New(errkind.NotFound, "hnsw: id not found")
	// ErrCorrupt marks an index that failed an integrity check.
	ErrCorrupt = errkind.New(errkind.Corrupt, "hnsw: corrupt graph")
)
