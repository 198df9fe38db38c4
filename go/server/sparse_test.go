package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestSparseFieldsAndSearchGoInAndComeOut prevents the native door from
// losing a sparse value, a point's lack of one or a string id, and its
// search from answering other than the engine's fusion: a collection with
// a dense and a sparse field is created, written, queried by the sparse
// field, read back, searched by rrf, dbsf and a single list, and shown by
// GET /collections/{name}.
func TestSparseFieldsAndSearchGoInAndComeOut(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.must(t, "POST", "/collections", `{"name": "s", "fsync": "never", "vectors": {"text": {"dim": 2, "metric": "ip"}},
		"sparse_vectors": {"kw": {"modifier": "none"}}}`)
	ts.must(t, "POST", "/collections/s/upsert", `{"ids": [1, 2, "doc"],
		"vectors": {"text": [[1, 0], [0, 1], [0.7, 0.7]],
		            "kw": [{"indices": [9, 3], "values": [2, 1]}, null, {"indices": [9], "values": [5]}]},
		"metadata": [{"i": 0}, {"i": 1}, {"i": 2}]}`)
	out := ts.must(t, "POST", "/collections/s/query", `{"using": "kw", "sparse": {"indices": [9, 3], "values": [1, 1]}, "k": 5}`)
	if got := fmt.Sprint(out["results"]); got != "[map[id:doc metadata:map[i:2] score:5] map[id:1 metadata:map[i:0] score:3]]" {
		t.Fatalf("sparse query: %s", got)
	}
	out = ts.must(t, "POST", "/collections/s/query", `{"using": "kw", "sparse": {"indices": [3], "values": [1]}, "filter": {"i": 2}}`)
	if got := fmt.Sprint(out["results"]); got != "[]" {
		t.Fatalf("filtered sparse query: %s", got)
	}
	out = ts.must(t, "POST", "/collections/s/get", `{"ids": [1, 2, "doc"], "include": [], "vectors": ["kw"]}`)
	want := "[map[id:1 vectors:map[kw:map[indices:[3 9] values:[1 2]]]] map[id:2 vectors:map[]] " +
		"map[id:doc vectors:map[kw:map[indices:[9] values:[5]]]]]"
	if got := fmt.Sprint(out["points"]); got != want {
		t.Fatalf("get sparse:\n got %s\nwant %s", got, want)
	}
	// rrf (k 2): dense [2, doc, 1] and sparse [doc, 1]: doc 1/3+1/2, 2 1/2, 1 1/4+1/3.
	body := `{"queries": [{"using": "text", "vector": [0, 1]}, {"using": "kw", "sparse": {"indices": [9, 3], "values": [1, 1]}}],
		"k": 3, "include": []}`
	out = ts.must(t, "POST", "/collections/s/search", body)
	if got := fmt.Sprint(out["results"]); got != "[map[id:doc score:0.8333333333333333] map[id:1 score:0.5833333333333333] map[id:2 score:0.5]]" {
		t.Fatalf("rrf search: %s", got)
	}
	out = ts.must(t, "POST", "/collections/s/search", strings.Replace(body, `"k": 3`, `"k": 3, "fusion": "dbsf"`, 1))
	if res := out["results"].([]any); len(res) != 3 || fmt.Sprint(res[0].(map[string]any)["id"]) != "doc" {
		t.Fatalf("dbsf search: %v", res)
	}
	out = ts.must(t, "POST", "/collections/s/search", `{"queries": [{"using": "kw", "sparse": {"indices": [9], "values": [1]}}],
		"fusion": null, "k": 1, "include": []}`)
	if got := fmt.Sprint(out["results"]); got != "[map[id:doc score:5]]" {
		t.Fatalf("search of one list: %s", got)
	}
	ts.must(t, "POST", "/collections/s/add_sparse_field", `{"name": "tags", "modifier": "idf"}`)
	info := ts.must(t, "GET", "/collections/s", nil)
	if got := fmt.Sprint(info["sparse_vectors"]); got != "[map[modifier:none name:kw points:2] map[modifier:idf name:tags points:0]]" {
		t.Fatalf("info sparse_vectors: %s", got)
	}
	ts.must(t, "POST", "/collections/s/remove_vector_field", `{"name": "tags"}`)
}

// TestBadSparseRequestsAre4xxNamingTheProblem prevents a malformed sparse
// write, query or search from being a 500 or an answer that does not say
// what is wrong.
func TestBadSparseRequestsAre4xxNamingTheProblem(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.must(t, "POST", "/collections", `{"name": "s", "fsync": "never", "vectors": {"text": {"dim": 2}}, "sparse_vectors": ["kw"]}`)
	for _, c := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/collections", `{"name": "m", "dim": 2, "sparse_vectors": {"a": {"modifier": "bm25"}}}`, 422, `"a"`},
		{"/collections", `{"name": "m", "dim": 2, "sparse_vectors": [""]}`, 422, "needs a name"},
		{"/collections/s/upsert", `{"ids": [1], "vectors": {"kw": [{"indices": [1]}]}}`, 422, `"indices" and "values"`},
		{"/collections/s/upsert", `{"ids": [1], "vectors": {"kw": [{"indices": [1, 2], "values": [1]}]}}`, 422, `"kw"`},
		{"/collections/s/upsert", `{"ids": [1], "vectors": {"kw": [{"indices": [1, 1], "values": [1, 2]}]}}`, 422, `"kw"`},
		{"/collections/s/upsert", `{"ids": [1], "vectors": {"kw": [[1, 2]]}}`, 422, `"kw"`},
		{"/collections/s/query", `{"using": "text", "sparse": {"indices": [1], "values": [1]}}`, 422, `"text"`},
		{"/collections/s/query", `{"sparse": {"indices": [1], "values": [1]}}`, 400, "using"},
		{"/collections/s/query", `{"using": "kw", "sparse": {"indices": [1], "values": [1], "x": 1}}`, 422, "sparse"},
		{"/collections/s/search", `{"queries": []}`, 422, "sub-queries"},
		{"/collections/s/search", `{"queries": [{"using": "text"}]}`, 422, "exactly one of"},
		{"/collections/s/search", `{"queries": [{"using": "kw", "vector": [1, 2]}]}`, 422, `"kw" is sparse`},
		{"/collections/s/search", `{"queries": [{"text": "x"}]}`, 422, "no text index"},
		{"/collections/s/search", `{"queries": [{"using": "text", "vector": [1, 2]}], "fusion": "mean"}`, 422, "rrf"},
		{"/collections/s/search", `{"queries": [{"using": "text", "vector": [1, 2]}, {"using": "text", "vector": [1, 2]}], "fusion": null}`, 422, "one sub-query"},
		{"/collections/s/add_sparse_field", `{"name": "text"}`, 409, `"text"`},
		{"/collections/s/add_sparse_field", `{"name": "x", "modifier": "bm25"}`, 422, `"x"`},
	} {
		st, out := ts.do(t, "POST", c.path, c.body)
		if msg := fmt.Sprint(out["error"]); st != c.status || !strings.Contains(msg, c.want) {
			t.Errorf("POST %s %s: %d %v; want %d naming %s", c.path, c.body, st, out, c.status, c.want)
		}
	}
}
