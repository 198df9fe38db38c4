package main

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/collection"
)

const sparseSchema = `{"vectors": {"text": {"dim": 2, "metric": "ip"}},
                       "sparse_vectors": {"kw": {"modifier": "none"}}, "fsync": "never", "seed": 7}`

// TestSparseFieldsCrossTheABI prevents the sparse exports from losing a
// point's coordinates, its lack of a value or a string id on the way
// from a C caller to the engine and back, and the fused search from
// answering anything but the engine's QueryFused.
func TestSparseFieldsCrossTheABI(t *testing.T) {
	h := createSchema(t, sparseSchema)
	handle := cHandle(h)
	ints := []uint64{1, 2, 0}
	strs := cIDStrings([]uint8{0, 0, 1}, "doc", []int64{0, 0, 0, 3})
	text := cField("text", -1, nil, nil, []float32{1, 0, 0, 1, 0.7, 0.7})
	// 1: {3: 1, 9: 2}; "doc": {9: 5} (indices out of order for 1); 2 lacks kw.
	kw := cSparseField("kw", 2, []int64{0, 2}, []int64{2, 1}, []uint32{9, 3, 9}, []float32{2, 1, 5})
	fields, nf := cFields(text, kw)
	meta, metaLen := cStr(`[{"t": "one"}, {"t": "two"}, {"t": "three"}]`)
	eb, el, msg := errBuffer()
	if rc := strata_col_upsert_points(handle, cUint64s(ints), 3, strs, fields, nf, meta, metaLen, eb, el); rc != statusOK {
		t.Fatalf("upsert_points = %d: %s", rc, msg())
	}

	// query_sparse: dot products 5*1 = 5 ("doc") and 2*1 + 1*1 = 3 (1).
	name, nameLen := cStr("kw")
	qi, qv := []uint32{9, 3}, []float32{1, 1}
	outIDs, scores, outN := make([]int64, 3), make([]float64, 3), newCInt64()
	idJSON, docs := newCBuffer(), newCBuffer()
	if rc := strata_col_query_sparse(handle, name, nameLen, cUint32s(qi), cFloats(qv), 2, 3, nil, 0, cInt64s(outIDs), idJSON,
		cDoubles(scores), outN, docs, eb, el); rc != statusOK {
		t.Fatalf("query_sparse = %d: %s", rc, msg())
	}
	if got := string(takeBuffer(idJSON)); *outN != 2 || got != `["doc",1]` || scores[0] != 5 || scores[1] != 3 {
		t.Fatalf("query_sparse = %d hits %s scores %v", *outN, got, scores)
	}
	if got := string(takeBuffer(docs)); got != `[{"t":"three"},{"t":"one"}]` {
		t.Fatalf("query_sparse documents = %s", got)
	}
	// With a filter, and into int64 ids (no string id in the answer).
	where, whereLen := cStr(`{"t": "one"}`)
	if rc := strata_col_query_sparse(handle, name, nameLen, cUint32s(qi), cFloats(qv), 2, 3, where, whereLen, cInt64s(outIDs), idJSON,
		cDoubles(scores), outN, nil, eb, el); rc != statusOK || *outN != 1 || outIDs[0] != 1 {
		t.Fatalf("filtered query_sparse = %d (%s): %d hits %v", rc, msg(), *outN, outIDs)
	}

	// get_sparse_vectors: sorted by index; -1 for the point lacking it.
	counts := []int64{7, 7, 7}
	idxBuf, valBuf := newCBuffer(), newCBuffer()
	if rc := strata_col_get_sparse_vectors(handle, cUint64s(ints), 3, strs, name, nameLen, cInt64s(counts), idxBuf, valBuf, eb, el); rc != statusOK {
		t.Fatalf("get_sparse_vectors = %d: %s", rc, msg())
	}
	gotIdx, gotVal := bufferOf[uint32](idxBuf), bufferOf[float32](valBuf)
	if !slices.Equal(counts, []int64{2, -1, 1}) || !slices.Equal(gotIdx, []uint32{3, 9, 9}) || !slices.Equal(gotVal, []float32{1, 2, 5}) {
		t.Fatalf("get_sparse_vectors counts %v indices %v values %v", counts, gotIdx, gotVal)
	}

	// search: rrf of a dense and a sparse list equals the engine's QueryFused.
	c, _ := lookupCollection(handle)
	for _, fusion := range []struct {
		code   int
		method collection.FusionMethod
	}{{fusionRRF, collection.RRF}, {fusionDBSF, collection.DBSF}} {
		subs, nsubs := cSubs(cDenseSub("text", []float32{0, 1}, 3), cSparseSub("kw", qi, qv, 3))
		if rc := strata_col_search(handle, subs, nsubs, cInt(fusion.code), 0, 3, 1, nil, 0, cInt64s(outIDs), idJSON,
			cDoubles(scores), outN, nil, eb, el); rc != statusOK {
			t.Fatalf("search %v = %d: %s", fusion.method, rc, msg())
		}
		want, err := c.QueryFused([]collection.SubQuery{{Field: "text", Vector: []float32{0, 1}, Limit: 3},
			{Field: "kw", Indices: qi, Values: qv, Limit: 3}}, collection.Fusion{Method: fusion.method}, 3, nil, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		got := string(takeBuffer(idJSON))
		if int(*outN) != len(want) || got != string(idsJSON(scoredIDs(want))) || scores[0] != want[0].Score {
			t.Fatalf("search %v = %s %v, want %+v", fusion.method, got, scores[:*outN], want)
		}
	}
	// FUSION_NONE: one list, scored by the similarity (ip: 1 - distance).
	subs, nsubs := cSubs(cDenseSub("text", []float32{0, 1}, 1))
	if rc := strata_col_search(handle, subs, nsubs, cInt(fusionNone), 0, 3, 1, nil, 0, cInt64s(outIDs), idJSON,
		cDoubles(scores), outN, nil, eb, el); rc != statusOK || *outN != 3 || math.Abs(scores[0]-1) > 1e-6 {
		t.Fatalf("search none = %d (%s): %d hits, scores %v", rc, msg(), *outN, scores)
	}

	// Refusals name the problem.
	for _, bad := range []struct {
		subs []cSubQuery
		want string
	}{
		{[]cSubQuery{cDenseSub("kw", []float32{0, 1}, 3)}, `"kw" is sparse`},
		{[]cSubQuery{cSparseSub("text", qi, qv, 3)}, `"text" is not sparse`},
		{[]cSubQuery{{limit: 3}}, "exactly one of"},
		{[]cSubQuery{cTextSub("one", 3)}, "no text index"},
		{[]cSubQuery{cDenseSub("text", []float32{0, 1}, 0)}, "limit"},
	} {
		subs, nsubs := cSubs(bad.subs...)
		rc := strata_col_search(handle, subs, nsubs, cInt(fusionRRF), 0, 3, 1, nil, 0, cInt64s(outIDs), idJSON, cDoubles(scores), outN, nil, eb, el)
		if rc != statusInvalid || !strings.Contains(msg(), bad.want) {
			t.Errorf("search %s: %d %q, want STRATA_ERR_INVALID saying %s", bad.want, rc, msg(), bad.want)
		}
	}
}

func scoredIDs(s []collection.Scored) []collection.ID {
	out := make([]collection.ID, len(s))
	for i, x := range s {
		out[i] = x.ID
	}
	return out
}

// TestFuseMatchesTheEngine prevents strata_fuse (a sharded door's merge)
// from answering other than collection.Fuse over the same lists.
func TestFuseMatchesTheEngine(t *testing.T) {
	lists := [][]collection.Scored{
		{{ID: collection.IntID(1), Score: 0.9}, {ID: collection.IntID(2), Score: 0.5}, {ID: collection.IntID(3), Score: 0.1}},
		{{ID: collection.IntID(3), Score: 7}, {ID: collection.IntID(4), Score: 6}},
	}
	var ids []uint64
	var scores []float64
	lens := []int64{}
	for _, l := range lists {
		lens = append(lens, int64(len(l)))
		for _, s := range l {
			ids, scores = append(ids, s.ID.Int()), append(scores, s.Score)
		}
	}
	for _, fusion := range []struct {
		code   int
		method collection.FusionMethod
	}{{fusionRRF, collection.RRF}, {fusionDBSF, collection.DBSF}} {
		pos, out, n := make([]int64, 3), make([]float64, 3), newCInt64()
		eb, el, msg := errBuffer()
		if rc := strata_fuse(2, cInt64s(lens), cUint64s(ids), nil, cDoubles(scores), cInt(fusion.code), 0, 3, cInt64s(pos),
			cDoubles(out), n, eb, el); rc != statusOK {
			t.Fatalf("strata_fuse = %d: %s", rc, msg())
		}
		want, _ := collection.Fuse(lists, collection.Fusion{Method: fusion.method}, 3)
		for i, w := range want {
			if ids[pos[i]] != w.ID.Int() || out[i] != w.Score {
				t.Fatalf("%v: fused[%d] = id %d score %v, want %+v", fusion.method, i, ids[pos[i]], out[i], want)
			}
		}
	}
}
