package main

// #include <stdlib.h>
// #include "strata.h"
import "C"

import (
	"unsafe"
)

// C-typed values in Go memory, for this package's tests: a _test.go file
// cannot use cgo, so it cannot name C types, but it can call the exports
// (plain Go functions) with values built here. Nothing else uses them.

// cStr returns s as NUL-terminated bytes and its length without the NUL.
func cStr(s string) (*C.char, C.size_t) {
	b := append([]byte(s), 0)
	return (*C.char)(unsafe.Pointer(&b[0])), C.size_t(len(s))
}

func cUint64s(v []uint64) *C.uint64_t {
	if len(v) == 0 {
		return nil
	}
	return (*C.uint64_t)(unsafe.Pointer(&v[0]))
}

func cInt64s(v []int64) *C.int64_t {
	if len(v) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&v[0]))
}

func cFloats(v []float32) *C.float {
	if len(v) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&v[0]))
}

// cIDStrings packs ids as strata_id_strings, with kinds and offsets as
// given (so tests can make them wrong).
func cIDStrings(kinds []uint8, data string, offsets []int64) *C.strata_id_strings {
	s := &C.strata_id_strings{offsets: cInt64s(offsets)}
	if len(kinds) > 0 {
		s.kinds = (*C.uint8_t)(unsafe.Pointer(&kinds[0]))
	}
	if data != "" {
		s.bytes, _ = cStr(data)
	}
	return s
}

// cField describes one field's values; nPoints -1 is every point.
func cField(name string, nPoints int64, points, counts []int64, values []float32) C.strata_field_values {
	p, n := cStr(name)
	return C.strata_field_values{name: p, name_len: n, n_points: C.int64_t(nPoints), points: cInt64s(points),
		counts: cInt64s(counts), values: cFloats(values), n_values: C.int64_t(len(values))}
}

func cFields(fields ...C.strata_field_values) (*C.strata_field_values, C.int64_t) {
	if len(fields) == 0 {
		return nil, 0
	}
	return &fields[0], C.int64_t(len(fields))
}

func newCHandle() *C.strata_handle { return new(C.strata_handle) }
func newCInt64() *C.int64_t        { return new(C.int64_t) }
func newCBuffer() *C.strata_buffer { return new(C.strata_buffer) }

// errBuffer is an error buffer and a function reading its message.
func errBuffer() (*C.char, C.size_t, func() string) {
	b := make([]byte, 512)
	p := (*C.char)(unsafe.Pointer(&b[0]))
	return p, C.size_t(len(b)), func() string { return C.GoString(p) }
}

// takeBuffer returns a buffer's bytes and frees it.
func takeBuffer(b *C.strata_buffer) []byte {
	defer strata_buffer_free(b)
	if b.len == 0 {
		return nil
	}
	return C.GoBytes(unsafe.Pointer(b.data), C.int(b.len))
}

// Names of C types a test can use.
type (
	cFieldValues = C.strata_field_values
	cInt64       = C.int64_t
)

func cHandle(h uint64) C.strata_handle { return C.strata_handle(h) }

// cSparseField describes a sparse field's values: counts coordinates per
// point of points (nPoints -1: every point).
func cSparseField(name string, nPoints int64, points, counts []int64, indices []uint32, values []float32) C.strata_field_values {
	d := cField(name, nPoints, points, counts, values)
	d.indices = cUint32s(indices)
	return d
}

func cUint32s(v []uint32) *C.uint32_t {
	if len(v) == 0 {
		return nil
	}
	return (*C.uint32_t)(unsafe.Pointer(&v[0]))
}

func cDoubles(v []float64) *C.double {
	if len(v) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&v[0]))
}

// cDenseSub, cSparseSub and cTextSub are sub-queries of strata_col_search.
func cDenseSub(field string, vector []float32, limit int64) C.strata_sub_query {
	p, n := cStr(field)
	return C.strata_sub_query{field: p, field_len: n, vector: cFloats(vector), n_vector: C.int64_t(len(vector)), limit: C.int64_t(limit)}
}

func cSparseSub(field string, indices []uint32, values []float32, limit int64) C.strata_sub_query {
	p, n := cStr(field)
	return C.strata_sub_query{field: p, field_len: n, indices: cUint32s(indices), sparse_values: cFloats(values),
		nnz: C.int64_t(len(indices)), limit: C.int64_t(limit)}
}

func cTextSub(text string, limit int64) C.strata_sub_query {
	p, n := cStr(text)
	return C.strata_sub_query{text: p, text_len: n, limit: C.int64_t(limit)}
}

func cSubs(subs ...C.strata_sub_query) (*C.strata_sub_query, C.int64_t) {
	return &subs[0], C.int64_t(len(subs))
}

// bufferOf returns a buffer's bytes as T values and frees it.
func bufferOf[T any](b *C.strata_buffer) []T {
	raw := takeBuffer(b)
	if len(raw) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*T)(unsafe.Pointer(&raw[0])), len(raw)/int(unsafe.Sizeof(zero)))
}

// Fusion constants of strata.h.
const (
	fusionNone = C.STRATA_FUSION_NONE
	fusionRRF  = C.STRATA_FUSION_RRF
	fusionDBSF = C.STRATA_FUSION_DBSF
)

type cSubQuery = C.strata_sub_query

func cInt(v int) C.int { return C.int(v) }
