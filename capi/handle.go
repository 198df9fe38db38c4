package main

// #include "strata.h"
import "C"

import (
	"fmt"
	"runtime/cgo"
	"unsafe"

	"github.com/strata-db/strata/go/collection"
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

// queryOutputs checks the outputs of a call answering nq queries of k
// results each (out_ids and a score or distance array, nq*k slots) and
// returns the ids to fill, one per slot: the prelude every query export
// shares.
func queryOutputs(nq, k C.int64_t, outIDs *C.int64_t, outValues *C.float) ([]collection.ID, error) {
	if nq < 0 {
		return nil, invalidf("number of queries must be >= 0, got %d", nq)
	}
	if err := checkOutputs(nq, k); err != nil {
		return nil, err
	}
	total := int(nq) * int(k)
	if total > 0 && (outIDs == nil || outValues == nil) {
		return nil, invalidf("output pointer is NULL")
	}
	return make([]collection.ID, total), nil
}

// writeAnswer hands a query's ids to the caller (int64 ids in outIDs, or
// JSON in outIDJSON when one is a string: intResults) and, when outMeta
// is not NULL, their documents as a JSON array: the epilogue every query
// export shares.
func writeAnswer(c *collection.Collection, ids []collection.ID, outIDs *C.int64_t, outIDJSON, outMeta *C.strata_buffer) error {
	if err := intResults(ids, view[int64](outIDs, len(ids)), outIDJSON); err != nil {
		return err
	}
	if outMeta != nil {
		docs, err := c.Documents(ids)
		if err != nil {
			return err
		}
		setBuffer(outMeta, documentsJSON(docs))
	}
	return nil
}

// writeStats copies a query's stats to the caller's struct, if any.
func writeStats(out *C.strata_search_stats, st hnsw.SearchStats) {
	if out != nil {
		*out = C.strata_search_stats{distance_computations: C.int64_t(st.DistanceComputations),
			plan: C.int(st.Plan), allowed: C.int64_t(st.Allowed), ef_search: C.int64_t(st.EfSearch)}
	}
}

// writeScored hands a scored answer (QuerySparse, Search, QueryFused) to
// the caller: its ids and scores into the first len(hits) slots, their
// number into *outN, and the documents as writeAnswer does.
func writeScored(c *collection.Collection, hits []collection.Scored, outIDs *C.int64_t, outIDJSON *C.strata_buffer,
	outScores *C.double, outN *C.int64_t, outMeta *C.strata_buffer) error {
	ids, scores := make([]collection.ID, len(hits)), view[float64](outScores, len(hits))
	for i, h := range hits {
		ids[i], scores[i] = h.ID, h.Score
	}
	if err := writeAnswer(c, ids, outIDs, outIDJSON, outMeta); err != nil {
		return err
	}
	*outN = C.int64_t(len(hits))
	return nil
}
