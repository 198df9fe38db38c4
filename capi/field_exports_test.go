package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"runtime/cgo"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/strata-db/strata/go/collection"
)

// Status codes of strata.h (a test cannot use cgo).
const (
	statusOK       = 0
	statusInvalid  = 1
	statusNotFound = 3
	statusInternal = 6
	statusExists   = 11
)

// createSchema makes a collection through strata_col_create_schema.
func createSchema(t *testing.T, schema string) uint64 {
	t.Helper()
	path, _ := cStr(filepath.Join(t.TempDir(), "col"))
	raw, n := cStr(schema)
	h := newCHandle()
	eb, el, msg := errBuffer()
	if rc := strata_col_create_schema(path, raw, n, h, eb, el); rc != statusOK {
		t.Fatalf("strata_col_create_schema(%s) = %d: %s", schema, rc, msg())
	}
	t.Cleanup(func() {
		eb, el, _ := errBuffer()
		strata_col_close(*h, eb, el)
	})
	return uint64(*h)
}

const twoFields = `{"vectors": {"text": {"dim": 2, "metric": "l2"},
                                "tokens": {"dim": 2, "metric": "ip", "multivector": "max_sim"}},
                    "fsync": "never", "seed": 7}`

// TestNamedFieldsCrossTheABI prevents the field exports from losing a
// field's values, a point's lack of a field, or a string id on the way
// from a C caller to the engine and back.
func TestNamedFieldsCrossTheABI(t *testing.T) {
	h := createSchema(t, twoFields)
	handle := cHandle(h)
	ints := []uint64{0, 7, 0}
	strs := cIDStrings([]uint8{1, 0, 1}, "doc-adoc-b", []int64{0, 5, 5, 10})
	text := cField("text", -1, nil, nil, []float32{0, 0, 1, 0, 5, 5})
	// Only 7 and "doc-b" have tokens: 1 and 2 vectors.
	tokens := cField("tokens", 2, []int64{1, 2}, []int64{1, 2}, []float32{1, 0, 0, 1, 0.5, 0.5})
	fields, nf := cFields(text, tokens)
	meta, metaLen := cStr(`[{"k": 1}, null, {"k": 3}]`)
	eb, el, msg := errBuffer()
	if rc := strata_col_upsert_points(handle, cUint64s(ints), 3, strs, fields, nf, meta, metaLen, eb, el); rc != statusOK {
		t.Fatalf("upsert_points = %d: %s", rc, msg())
	}

	// A dense query of "text": two queries, the nearest first.
	q := cField("text", 2, nil, nil, []float32{0.9, 0, 5, 5})
	outIDs, dists := make([]int64, 4), make([]float32, 4)
	idJSON := newCBuffer()
	if rc := strata_col_query_field(handle, &q, 2, 0, 1, nil, 0, cInt64s(outIDs), idJSON, cFloats(dists), nil, nil, eb, el); rc != statusOK {
		t.Fatalf("query_field text = %d: %s", rc, msg())
	}
	if got := string(takeBuffer(idJSON)); got != `[7,"doc-a","doc-b",7]` {
		t.Fatalf("text query ids = %s", got)
	}

	// A multivector query of "tokens": only the two points that have it.
	mq := cField("tokens", 1, nil, []int64{1}, []float32{0, 1})
	outIDs, dists = make([]int64, 3), make([]float32, 3)
	if rc := strata_col_query_field(handle, &mq, 3, 0, 1, nil, 0, cInt64s(outIDs), idJSON, cFloats(dists), nil, nil, eb, el); rc != statusOK {
		t.Fatalf("query_field tokens = %d: %s", rc, msg())
	}
	if got := string(takeBuffer(idJSON)); got != `["doc-b",7,null]` || !math.IsInf(float64(dists[2]), 1) {
		t.Fatalf("tokens query ids = %s, distances %v", got, dists)
	}

	// get_vectors: the points lacking the field are left out.
	counts := []int64{-1, -1, -1}
	vecs := newCBuffer()
	name, nameLen := cStr("tokens")
	if rc := strata_col_get_vectors(handle, cUint64s(ints), 3, strs, name, nameLen, cInt64s(counts), vecs, eb, el); rc != statusOK {
		t.Fatalf("get_vectors = %d: %s", rc, msg())
	}
	got := floatsOf(takeBuffer(vecs))
	if !slices.Equal(counts, []int64{0, 1, 2}) || !slices.Equal(got, []float32{1, 0, 0, 1, 0.5, 0.5}) {
		t.Fatalf("get_vectors tokens: counts %v vectors %v", counts, got)
	}

	// update_vectors gives "doc-a" tokens; delete_vectors takes 7's text.
	upd := cField("tokens", -1, nil, []int64{1}, []float32{3, 3})
	single := cIDStrings([]uint8{1}, "doc-a", []int64{0, 5})
	fields, nf = cFields(upd)
	count := newCInt64()
	if rc := strata_col_update_vectors(handle, cUint64s([]uint64{0}), 1, single, fields, nf, count, eb, el); rc != statusOK || *count != 1 {
		t.Fatalf("update_vectors = %d (%d updated): %s", rc, *count, msg())
	}
	names, namesLen := cStr(`["text"]`)
	if rc := strata_col_delete_vectors(handle, cUint64s([]uint64{7}), 1, nil, names, namesLen, count, eb, el); rc != statusOK || *count != 1 {
		t.Fatalf("delete_vectors = %d (%d changed): %s", rc, *count, msg())
	}
	text5, textLen := cStr("text")
	if rc := strata_col_get_vectors(handle, cUint64s(ints), 3, strs, text5, textLen, cInt64s(counts), vecs, eb, el); rc != statusOK {
		t.Fatalf("get_vectors = %d: %s", rc, msg())
	}
	takeBuffer(vecs)
	if !slices.Equal(counts, []int64{1, 0, 1}) {
		t.Fatalf("after delete_vectors, text counts are %v, want [1 0 1]", counts)
	}

	// The schema changes, and info shows it.
	fname, fnameLen := cStr("image")
	spec, specLen := cStr(`{"dim": 4, "quantization": "sq8"}`)
	if rc := strata_col_add_vector_field(handle, fname, fnameLen, spec, specLen, eb, el); rc != statusOK {
		t.Fatalf("add_vector_field = %d: %s", rc, msg())
	}
	if rc := strata_col_add_vector_field(handle, fname, fnameLen, spec, specLen, eb, el); rc != statusExists || !strings.Contains(msg(), `"image"`) {
		t.Fatalf("add_vector_field twice = %d: %s", rc, msg())
	}
	if rc := strata_col_remove_vector_field(handle, text5, textLen, eb, el); rc != statusOK {
		t.Fatalf("remove_vector_field = %d: %s", rc, msg())
	}
	if rc := strata_col_remove_vector_field(handle, text5, textLen, eb, el); rc != statusNotFound || !strings.Contains(msg(), `"text"`) {
		t.Fatalf("remove_vector_field twice = %d: %s", rc, msg())
	}
	info := newCBuffer()
	if rc := strata_col_info(handle, info, eb, el); rc != statusOK {
		t.Fatalf("info = %d: %s", rc, msg())
	}
	var described struct {
		Vectors []struct {
			Name, Metric, Quantization, Multivector string
			Dim, Points                             int
		}
	}
	if err := json.Unmarshal(takeBuffer(info), &described); err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, v := range described.Vectors {
		shown = append(shown, v.Name+"/"+v.Metric+"/"+v.Quantization+"/"+v.Multivector)
	}
	if want := []string{"image/cosine/sq8/none", "tokens/ip/none/max_sim"}; !slices.Equal(shown, want) {
		t.Fatalf("info vectors = %v, want %v", shown, want)
	}
}

func floatsOf(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return slices.Clone(unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4))
}

// TestBadFieldArgumentsAreInvalidNamingTheField prevents a malformed
// descriptor or schema from reaching the engine as a slice over the wrong
// memory, or failing without saying which field.
func TestBadFieldArgumentsAreInvalidNamingTheField(t *testing.T) {
	h := cHandle(createSchema(t, twoFields))
	ids := []uint64{1, 2}
	check := func(what string, rc int, msg, want string) {
		t.Helper()
		if rc != statusInvalid || !strings.Contains(msg, want) {
			t.Errorf("%s: status %d, message %q; want %d containing %q", what, rc, msg, statusInvalid, want)
		}
	}
	eb, el, msg := errBuffer()
	upsert := func(fields ...cFieldValues) int {
		p, n := cFields(fields...)
		return int(strata_col_upsert_points(h, cUint64s(ids), 2, nil, p, n, nil, 0, eb, el))
	}
	check("too many points", upsert(cField("text", 3, []int64{0, 1, 2}, nil, make([]float32, 6))), msg(), `"text"`)
	check("points NULL", upsert(cField("text", 1, nil, nil, make([]float32, 2))), msg(), "points pointer is NULL")
	check("points not ascending", upsert(cField("text", 2, []int64{1, 0}, nil, make([]float32, 4))), msg(), `"text"`)
	check("floats short", upsert(cField("text", -1, nil, nil, make([]float32, 3))), msg(), `"text"`)
	check("no such field", upsert(cField("nope", -1, nil, nil, make([]float32, 4))), msg(), `"nope"`)
	check("counts on a dense field", upsert(cField("text", -1, nil, []int64{1, 1}, make([]float32, 4))), msg(), `"text"`)
	check("a multivector field without counts", upsert(cField("tokens", -1, nil, nil, make([]float32, 4))), msg(), `"tokens"`)
	check("a field twice", upsert(cField("text", -1, nil, nil, make([]float32, 4)), cField("text", -1, nil, nil, make([]float32, 4))), msg(), "twice")
	check("NaN", upsert(cField("text", -1, nil, nil, []float32{0, float32(math.NaN()), 0, 0})), msg(), "text")

	q := cField("tokens", 1, nil, []int64{2}, []float32{1, 0})
	check("multivector query counts past the floats", int(strata_col_query_field(h, &q, 1, 0, 1, nil, 0,
		cInt64s(make([]int64, 1)), nil, cFloats(make([]float32, 1)), nil, nil, eb, el)), msg(), `"tokens"`)
	q = cField("text", 1, nil, nil, []float32{1, 0, 0})
	check("dense query of the wrong width", int(strata_col_query_field(h, &q, 1, 0, 1, nil, 0,
		cInt64s(make([]int64, 1)), nil, cFloats(make([]float32, 1)), nil, nil, eb, el)), msg(), `"text"`)

	for _, schema := range []struct{ json, want string }{
		{`{"vectors": {"a": {"metric": "l2"}}}`, `"a": "dim" is required`},
		{`{"vectors": {"a": {"dim": 2, "metric": "hamming"}}}`, "hamming"},
		{`{"vectors": {"a": {"dim": 2, "sparse": true}}}`, "sparse"},
		{`{"vectors": {"a": {"dim": 2}, "a": {"dim": 3}}}`, "twice"},
		{`{"vectors": {"a": {"dim": 2, "multivector": "min_sim"}}}`, "min_sim"},
		{`{"vectors": {"a": {"dim": 0}}}`, `"a"`},
		{`{"fields": {}}`, "fields"},
		{`{"vectors": {}} {}`, "after"},
	} {
		path, _ := cStr(filepath.Join(t.TempDir(), "bad"))
		raw, n := cStr(schema.json)
		rc := strata_col_create_schema(path, raw, n, newCHandle(), eb, el)
		check("schema "+schema.json, int(rc), msg(), schema.want)
	}
}

// TestAPanicInAFieldExportNeverCrossesTheABI prevents a bug behind any of
// the field exports from unwinding into the C caller: a handle holding a
// nil collection makes every one of them panic inside the engine, and each
// must answer STRATA_ERR_INTERNAL with a message instead.
func TestAPanicInAFieldExportNeverCrossesTheABI(t *testing.T) {
	nilCol := cgo.NewHandle((*collection.Collection)(nil))
	defer nilCol.Delete()
	h := cHandle(uint64(nilCol))
	eb, el, msg := errBuffer()
	ids := cUint64s([]uint64{1})
	f := cField("text", 1, nil, nil, []float32{1, 2})
	fields, nf := cFields(cField("text", -1, nil, nil, []float32{1, 2}))
	name, nameLen := cStr("text")
	spec, specLen := cStr(`{"dim": 2}`)
	names, namesLen := cStr(`["text"]`)
	for op, rc := range map[string]func() int{
		"upsert_points":  func() int { return int(strata_col_upsert_points(h, ids, 1, nil, fields, nf, nil, 0, eb, el)) },
		"update_vectors": func() int { return int(strata_col_update_vectors(h, ids, 1, nil, fields, nf, newCInt64(), eb, el)) },
		"delete_vectors": func() int {
			return int(strata_col_delete_vectors(h, ids, 1, nil, names, namesLen, newCInt64(), eb, el))
		},
		"add_vector_field":    func() int { return int(strata_col_add_vector_field(h, name, nameLen, spec, specLen, eb, el)) },
		"remove_vector_field": func() int { return int(strata_col_remove_vector_field(h, name, nameLen, eb, el)) },
		"query_field": func() int {
			return int(strata_col_query_field(h, &f, 1, 0, 1, nil, 0, cInt64s(make([]int64, 1)), nil,
				cFloats(make([]float32, 1)), nil, nil, eb, el))
		},
		"get_vectors": func() int {
			return int(strata_col_get_vectors(h, ids, 1, nil, name, nameLen, cInt64s(make([]int64, 1)), newCBuffer(), eb, el))
		},
	} {
		if got := rc(); got != statusInternal || !strings.Contains(msg(), "strata_col_"+op+": internal error") {
			t.Errorf("%s on a nil collection: status %d, message %q", op, got, msg())
		}
	}
}
