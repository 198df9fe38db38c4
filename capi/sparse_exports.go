package main

// #include "strata.h"
import "C"

import (
	"strconv"
	"unsafe"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/collection/text"
	"github.com/strata-db/strata/go/limits"
)

// The exports of sparse vector fields and of fused (hybrid) queries
// (strata.h, "Sparse fields and fused queries"). Values are written with
// strata_col_upsert_points / strata_col_update_vectors (a descriptor with
// indices), removed with strata_col_remove_vector_field and
// strata_col_delete_vectors; the engine checks every number.

//export strata_col_add_sparse_field
func strata_col_add_sparse_field(h C.strata_handle, name *C.char, nameLen C.size_t, modifier *C.char,
	errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_add_sparse_field", h, errBuf, errLen, func(c *collection.Collection) error {
		field, err := nameArg(name, nameLen, "field name")
		if err != nil {
			return err
		}
		m, err := sparse.ParseModifier(optString(modifier))
		if err != nil {
			return invalidf("sparse field %q: %v", field, err)
		}
		return c.AddSparseField(collection.SparseField{Name: field, Modifier: m})
	})
}

// sparseArg views a sparse vector of nnz coordinates.
func sparseArg(indices *C.uint32_t, values *C.float, nnz C.int64_t, what string) ([]uint32, []float32, error) {
	if nnz < 0 || nnz > limits.MaxSparseNonZeros {
		return nil, nil, invalidf("%s: nnz must be in [0, %d], got %d", what, limits.MaxSparseNonZeros, nnz)
	}
	if nnz > 0 && (indices == nil || values == nil) {
		return nil, nil, invalidf("%s: indices or values pointer is NULL", what)
	}
	idx, val := view[uint32](indices, int(nnz)), view[float32](values, int(nnz))
	if idx == nil {
		idx, val = []uint32{}, []float32{} // a sparse query, even an empty one
	}
	return idx, val, nil
}

//export strata_col_query_sparse
func strata_col_query_sparse(h C.strata_handle, name *C.char, nameLen C.size_t, indices *C.uint32_t, values *C.float,
	nnz C.int64_t, k C.int64_t, where *C.char, whereLen C.size_t, outIDs *C.int64_t, outIDJSON *C.strata_buffer,
	outScores *C.double, outN *C.int64_t, outMeta *C.strata_buffer, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_query_sparse", h, errBuf, errLen, func(c *collection.Collection) error {
		field, err := nameArg(name, nameLen, "field name")
		if err != nil {
			return err
		}
		idx, val, err := sparseArg(indices, values, nnz, "sparse query")
		if err != nil {
			return err
		}
		if err := scoredOutputs(k, outIDs, outScores, outN); err != nil {
			return err
		}
		f, err := filterArg(where, whereLen)
		if err != nil {
			return err
		}
		hits, err := c.QuerySparse(field, idx, val, int(k), f, nil)
		if err != nil {
			return err
		}
		return writeScored(c, hits, outIDs, outIDJSON, outScores, outN, outMeta)
	})
}

// scoredOutputs checks the outputs of a scored answer of up to k hits.
func scoredOutputs(k C.int64_t, outIDs *C.int64_t, outScores *C.double, outN *C.int64_t) error {
	if err := checkOutputs(1, k); err != nil {
		return err
	}
	if outIDs == nil || outScores == nil || outN == nil {
		return invalidf("output pointer is NULL")
	}
	return nil
}

//export strata_col_get_sparse_vectors
func strata_col_get_sparse_vectors(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings,
	name *C.char, nameLen C.size_t, outCounts *C.int64_t, outIndices *C.strata_buffer, outValues *C.strata_buffer,
	errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_get_sparse_vectors", h, errBuf, errLen, func(c *collection.Collection) error {
		idv, err := idsArg(ids, int64(n), strs, "ids")
		if err != nil {
			return err
		}
		field, err := nameArg(name, nameLen, "field name")
		if err != nil {
			return err
		}
		if outIndices == nil || outValues == nil || (len(idv) > 0 && outCounts == nil) {
			return invalidf("output pointer is NULL")
		}
		found, vecs, err := c.GetSparseVectors(idv, field)
		if err != nil {
			return err
		}
		// found is a subsequence of idv in request order (as GetVectors).
		counts := view[int64](outCounts, len(idv))
		var allIdx []uint32
		var allVal []float32
		j := 0
		for i, id := range idv {
			counts[i] = -1
			if j < len(found) && found[j] == id {
				counts[i] = int64(len(vecs[j].Indices))
				allIdx, allVal = append(allIdx, vecs[j].Indices...), append(allVal, vecs[j].Values...)
				j++
			}
		}
		setBuffer(outIndices, bytesOf(allIdx))
		setBuffer(outValues, bytesOf(allVal))
		return nil
	})
}

//export strata_col_search
func strata_col_search(h C.strata_handle, subs *C.strata_sub_query, nsubs C.int64_t, fusion C.int, rrfK C.double,
	k C.int64_t, numThreads C.int, where *C.char, whereLen C.size_t, outIDs *C.int64_t, outIDJSON *C.strata_buffer,
	outScores *C.double, outN *C.int64_t, outMeta *C.strata_buffer, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_search", h, errBuf, errLen, func(c *collection.Collection) error {
		if nsubs < 1 || nsubs > limits.MaxFusedQueries {
			return invalidf("nsubs must be in [1, %d], got %d", limits.MaxFusedQueries, nsubs)
		}
		if subs == nil {
			return invalidf("sub-queries pointer is NULL")
		}
		queries := make([]collection.SubQuery, nsubs)
		for i, d := range view[C.strata_sub_query](subs, int(nsubs)) {
			q, err := subQueryArg(&d, i)
			if err != nil {
				return err
			}
			queries[i] = q
		}
		if err := scoredOutputs(k, outIDs, outScores, outN); err != nil {
			return err
		}
		f, err := filterArg(where, whereLen)
		if err != nil {
			return err
		}
		var hits []collection.Scored
		switch fusion {
		case C.STRATA_FUSION_NONE:
			if nsubs != 1 {
				return invalidf("STRATA_FUSION_NONE takes one sub-query (its own list), got %d", nsubs)
			}
			queries[0].Limit = int(k) // the list itself: as long as the outputs
			hits, err = c.Search(queries[0], f, nil, int(numThreads))
		case C.STRATA_FUSION_RRF, C.STRATA_FUSION_DBSF:
			method := collection.RRF
			if fusion == C.STRATA_FUSION_DBSF {
				method = collection.DBSF
			}
			hits, err = c.QueryFused(queries, collection.Fusion{Method: method, RRFK: float64(rrfK)}, int(k), f, nil, int(numThreads))
		default:
			return invalidf("unknown fusion %d for a fused query (-1 = none, 0 = rrf, 2 = dbsf)", fusion)
		}
		if err != nil {
			return err
		}
		return writeScored(c, hits, outIDs, outIDJSON, outScores, outN, outMeta)
	})
}

// subQueryArg reads the i-th sub-query of strata_col_search.
func subQueryArg(d *C.strata_sub_query, i int) (collection.SubQuery, error) {
	what := "sub-query " + strconv.Itoa(i)
	field, err := nameArg(d.field, d.field_len, what+" field")
	if err != nil {
		return collection.SubQuery{}, err
	}
	q := collection.SubQuery{Field: field, Limit: int(min(d.limit, limits.MaxK+1)), Ef: int(min(max(d.ef, -1), 1<<40))}
	if d.ef < 0 {
		return q, invalidf("%s: ef must be >= 0 (0: the default), got %d", what, d.ef)
	}
	kinds := 0
	if d.n_vector != 0 || d.vector != nil {
		kinds++
		if d.n_vector < 0 || d.n_vector > maxFloats {
			return q, invalidf("%s: n_vector must be in [0, 2^42], got %d", what, d.n_vector)
		}
		if d.vector == nil {
			return q, invalidf("%s: vector pointer is NULL", what)
		}
		q.Vector = view[float32](d.vector, int(d.n_vector))
	}
	if d.indices != nil || d.sparse_values != nil {
		kinds++
		if q.Indices, q.Values, err = sparseArg(d.indices, d.sparse_values, d.nnz, what); err != nil {
			return q, err
		}
	}
	if d.text != nil {
		kinds++
		raw, err := bytesArg(d.text, d.text_len, what+" text")
		if err != nil {
			return q, err
		}
		if len(raw) == 0 {
			return q, invalidf("%s: text is empty", what)
		}
		q.Text = string(raw)
		q.BM25 = text.Params{} // Lucene's defaults
	}
	if kinds != 1 {
		return q, invalidf("%s: give exactly one of a vector, a sparse vector (indices) or a text, got %d", what, kinds)
	}
	return q, nil
}

// bytesOf views a slice of plain numbers as its bytes.
func bytesOf[T uint32 | float32 | float64 | int64](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(v[0])))
}

// maxFuseLists bounds strata_fuse's lists: a fused query's sub-queries
// for each of many shards.
const maxFuseLists = limits.MaxFusedQueries << 10

//export strata_fuse
func strata_fuse(nlists C.int64_t, lens *C.int64_t, ids *C.uint64_t, strs *C.strata_id_strings, scores *C.double,
	fusion C.int, rrfK C.double, limit C.int64_t, outPos *C.int64_t, outScores *C.double, outN *C.int64_t,
	errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_fuse", errBuf, errLen, func() error {
		if nlists < 0 || nlists > maxFuseLists {
			return invalidf("nlists must be in [0, %d], got %d", maxFuseLists, nlists)
		}
		if nlists > 0 && lens == nil {
			return invalidf("lens pointer is NULL")
		}
		var method collection.FusionMethod
		switch fusion {
		case C.STRATA_FUSION_RRF:
			method = collection.RRF
		case C.STRATA_FUSION_DBSF:
			method = collection.DBSF
		default:
			return invalidf("unknown fusion %d (0 = rrf, 2 = dbsf)", fusion)
		}
		total := int64(0)
		for i, n := range view[int64](lens, int(nlists)) {
			if n < 0 || n > limits.MaxK {
				return invalidf("lens[%d] must be in [0, %d], got %d", i, limits.MaxK, n)
			}
			total += n
		}
		idv, err := idsArg(ids, total, strs, "ids")
		if err != nil {
			return err
		}
		if total > 0 && scores == nil {
			return invalidf("scores pointer is NULL")
		}
		if err := scoredOutputs(limit, outPos, outScores, outN); err != nil {
			return err
		}
		values := view[float64](scores, int(total))
		first := make(map[collection.ID]int64, total)
		lists := make([][]collection.Scored, nlists)
		at := int64(0)
		for i, n := range view[int64](lens, int(nlists)) {
			lists[i] = make([]collection.Scored, n)
			for j := range lists[i] {
				id := idv[at]
				if _, seen := first[id]; !seen {
					first[id] = at
				}
				lists[i][j] = collection.Scored{ID: id, Score: values[at]}
				at++
			}
		}
		fused, err := collection.Fuse(lists, collection.Fusion{Method: method, RRFK: float64(rrfK)}, int(limit))
		if err != nil {
			return err
		}
		pos, out := view[int64](outPos, len(fused)), view[float64](outScores, len(fused))
		for i, s := range fused {
			pos[i], out[i] = first[s.ID], s.Score
		}
		*outN = C.int64_t(len(fused))
		return nil
	})
}
