package main

// #include "strata.h"
import "C"

import (
	"github.com/strata-db/strata/go/collection"
)

//export strata_col_query_mmr
func strata_col_query_mmr(h C.strata_handle, vector *C.float, k C.int64_t, fetchK C.int64_t, lambda C.double, ef C.int64_t,
	numThreads C.int, where *C.char, whereLen C.size_t, outIDs *C.int64_t, outIDJSON *C.strata_buffer, outDists *C.float,
	outMeta *C.strata_buffer, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_query_mmr", h, errBuf, errLen, func(c *collection.Collection) error {
		q, err := floatRows(vector, 1, c.Options().Dim, "vector")
		if err != nil {
			return err
		}
		return queryMMR(c, "", q, k, fetchK, lambda, ef, numThreads, where, whereLen, outIDs, outIDJSON, outDists, outMeta)
	})
}

//export strata_col_query_mmr_field
func strata_col_query_mmr_field(h C.strata_handle, name *C.char, nameLen C.size_t, vector *C.float, nValues C.int64_t,
	k C.int64_t, fetchK C.int64_t, lambda C.double, ef C.int64_t, numThreads C.int, where *C.char, whereLen C.size_t,
	outIDs *C.int64_t, outIDJSON *C.strata_buffer, outDists *C.float, outMeta *C.strata_buffer, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_query_mmr_field", h, errBuf, errLen, func(c *collection.Collection) error {
		field, err := nameArg(name, nameLen, "field name")
		if err != nil {
			return err
		}
		q, err := floatRows(vector, 1, int(min(nValues, maxFloats)), "vector")
		if err != nil {
			return err
		}
		return queryMMR(c, field, q, k, fetchK, lambda, ef, numThreads, where, whereLen, outIDs, outIDJSON, outDists, outMeta)
	})
}

// queryMMR is the body of both MMR exports; the engine checks q against
// the field's dimension.
func queryMMR(c *collection.Collection, field string, q []float32, k, fetchK C.int64_t, lambda C.double, ef C.int64_t,
	numThreads C.int, where *C.char, whereLen C.size_t, outIDs *C.int64_t, outIDJSON *C.strata_buffer, outDists *C.float,
	outMeta *C.strata_buffer) error {
	ids, err := queryOutputs(1, k, outIDs, outDists)
	if err != nil {
		return err
	}
	f, err := filterArg(where, whereLen)
	if err != nil {
		return err
	}
	if fetchK < 0 || ef < 0 {
		return invalidf("fetch_k and ef must be >= 0 (0: the default), got %d and %d", fetchK, ef)
	}
	mmr := collection.MMR{Lambda: float64(lambda), FetchK: int(min(fetchK, 1<<40))}
	if _, err := c.QueryMMR(field, q, int(k), int(min(ef, 1<<40)), mmr, f, nil, int(numThreads), ids,
		view[float32](outDists, len(ids))); err != nil {
		return err
	}
	return writeAnswer(c, ids, outIDs, outIDJSON, outMeta)
}
