package main

// #include "strata.h"
import "C"

import (
	"fmt"
	"runtime/cgo"
	"unsafe"

	"github.com/strata-db/strata/go/flat"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/metric"
)

// engine is what a handle holds: the API shared by hnsw.Index and
// flat.Index. Every engine validates its input with package batch before
// changing anything, so the exports check only what building Go slices over
// C memory needs. New capabilities (remove, save, filters) extend it, or live
// in optional interfaces checked with a type assertion.
type engine interface {
	Add(vectors []float32, ids []uint64, outIDs []uint64, threads int) error
	Search(queries []float32, k, ef, threads int, outIDs []int64, outDists []float32) error
	Len() int
	Dim() int
	Metric() metric.Metric
	Progress() int64
	CheckIntegrity() error
}

var (
	_ engine = (*hnsw.Index)(nil)
	_ engine = (*flat.Index)(nil)
)

// newHandle registers x and returns its handle. The handle keeps x alive
// until freeHandle.
func newHandle(x engine) C.strata_handle {
	return C.strata_handle(cgo.NewHandle(x))
}

// lookup returns the engine behind h. cgo.Handle.Value panics on a handle
// that is unknown or deleted, so a stale or forged handle from the caller
// is turned into errBadHandle here rather than reaching call's recover as
// an "internal error". Handle numbers are never reused, so a freed handle
// cannot silently reach another index.
func lookup(h C.strata_handle) (x engine, err error) {
	if h == 0 {
		return nil, errBadHandle
	}
	defer func() {
		if recover() != nil {
			x, err = nil, fmt.Errorf("%w: %d", errBadHandle, uint64(h))
		}
	}()
	x, ok := cgo.Handle(h).Value().(engine)
	if !ok {
		return nil, fmt.Errorf("%w: %d", errBadHandle, uint64(h))
	}
	return x, nil
}

// freeHandle forgets h. An engine still in use by a concurrent call stays
// alive (it is Go memory) until that call returns.
func freeHandle(h C.strata_handle) (err error) {
	if _, err := lookup(h); err != nil {
		return err
	}
	defer func() {
		// Lost a race with another free of the same handle.
		if recover() != nil {
			err = fmt.Errorf("%w: %d", errBadHandle, uint64(h))
		}
	}()
	x, _ := cgo.Handle(h).Value().(engine)
	cgo.Handle(h).Delete()
	// An index loaded with mapped vectors releases its mapping now; Close
	// waits for searches already running on it.
	if c, ok := x.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// maxFloats bounds the slices built over caller memory (16 TiB of floats),
// far below what would make unsafe.Slice or n*dim overflow.
const maxFloats = 1 << 42

// floatRows views rows*dim floats at p for the duration of one call.
func floatRows(p *C.float, rows int64, dim int, what string) ([]float32, error) {
	if rows < 0 {
		return nil, invalidf("number of %s must be >= 0, got %d", what, rows)
	}
	if dim <= 0 {
		// A collection without the unnamed field: the engine's call
		// refuses it, naming the field.
		return nil, nil
	}
	if rows > maxFloats/int64(dim) {
		return nil, invalidf("%d %s of dim %d is too many", rows, what, dim)
	}
	if rows == 0 {
		return nil, nil
	}
	if p == nil {
		return nil, invalidf("%s pointer is NULL", what)
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(p)), int(rows)*dim), nil
}

// view returns n values at p (nil if p is NULL) for the duration of one call.
func view[T any, C any](p *C, n int) []T {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(p)), n)
}
