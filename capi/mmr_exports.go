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
		if err := checkOutputs(1, k); err != nil {
			return err
		}
		if outIDs == nil || outDists == nil {
			return invalidf("output pointer is NULL")
		}
		f, err := filterArg(where, whereLen)
		if err != nil {
			return err
		}
		if fetchK < 0 || ef < 0 {
			return invalidf("fetch_k and ef must be >= 0 (0: the default), got %d and %d", fetchK, ef)
		}
		ids, dists := make([]collection.ID, int(k)), view[float32](outDists, int(k))
		mmr := collection.MMR{Lambda: float64(lambda), FetchK: int(min(fetchK, 1<<40))}
		if _, err := c.QueryMMR("", q, int(k), int(min(ef, 1<<40)), mmr, f, nil, int(numThreads), ids, dists); err != nil {
			return err
		}
		if err := intResults(ids, view[int64](outIDs, int(k)), outIDJSON); err != nil {
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
	})
}
