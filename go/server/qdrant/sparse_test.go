package qdrant

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// hits returns a query answer's ids and scores.
func hits(t *testing.T, out map[string]any) (ids []any, scores []float64) {
	t.Helper()
	res := out["result"]
	if m, ok := res.(map[string]any); ok {
		res = m["points"]
	}
	for _, p := range res.([]any) {
		ids = append(ids, p.(map[string]any)["id"])
		scores = append(scores, p.(map[string]any)["score"].(float64))
	}
	return ids, scores
}

func sameHits(t *testing.T, what string, out map[string]any, ids string, scores ...float64) {
	t.Helper()
	gotIDs, gotScores := hits(t, out)
	if fmt.Sprint(gotIDs) != ids || len(gotScores) != len(scores) {
		t.Fatalf("%s: ids %v scores %v, want %s %v", what, gotIDs, gotScores, ids, scores)
	}
	for i := range scores {
		if math.Abs(gotScores[i]-scores[i]) > 1e-9 {
			t.Fatalf("%s: scores %v, want %v", what, gotScores, scores)
		}
	}
}

// TestSparseAndHybridThroughTheDoor prevents the door from losing or
// misreading a sparse field or a hybrid query as langchain-qdrant's
// SPARSE and HYBRID modes send them: sparse_vectors with a modifier in
// create and info, sparse values in upsert (indices in any order) and
// with_vector, a SparseVector query with using, has_vector, prefetch
// fused by rrf and dbsf (Euclid lists fused as Qdrant reports them, the
// distance), the filter reaching every prefetch, a nested prefetch under
// a re-scoring query, delete_vectors of a sparse field; bad input is a
// 400 naming the problem.
func TestSparseAndHybridThroughTheDoor(t *testing.T) {
	hs := newTestDoor(t, "")
	if st, out := call(t, hs, "PUT", "/collections/h", `{"vectors":{"":{"size":2,"distance":"Euclid"}},
		"sparse_vectors":{"kw":{},"bm":{"modifier":"idf","index":{"on_disk":false}}}}`); st != 200 {
		t.Fatalf("create: %d %v", st, out)
	}
	st, out := call(t, hs, "GET", "/collections/h", "")
	params := out["result"].(map[string]any)["config"].(map[string]any)["params"].(map[string]any)
	if st != 200 || fmt.Sprint(params["sparse_vectors"]) != "map[bm:map[modifier:idf] kw:map[modifier:none]]" ||
		fmt.Sprint(params["vectors"]) != "map[:map[distance:Euclid hnsw_config:map[ef_construct:200 m:16] size:2]]" {
		// created as {"": {...}}: answered so, as Qdrant keeps the form
		t.Fatalf("info: %d %v", st, params)
	}
	points := `{"points":[
		{"id":1,"vector":{"":[0,0],"kw":{"indices":[1,2],"values":[1,1]}},"payload":{"n":1}},
		{"id":2,"vector":{"":[1,0],"kw":{"indices":[2],"values":[3]}},"payload":{"n":2}},
		{"id":3,"vector":{"":[3,0],"kw":{"indices":[5,1],"values":[1,2]}},"payload":{"n":3}},
		{"id":4,"vector":{"":[6,0]},"payload":{"n":4}}]}`
	if st, out := call(t, hs, "PUT", "/collections/h/points?wait=true", points); st != 200 {
		t.Fatalf("upsert: %d %v", st, out)
	}
	st, out = call(t, hs, "POST", "/collections/h/points", `{"ids":[3,4],"with_vector":true}`)
	if got := fmt.Sprint(out["result"]); st != 200 || !strings.Contains(got, "kw:map[indices:[1 5] values:[2 1]]") ||
		strings.Count(got, "kw:") != 1 {
		t.Fatalf("retrieve: %d %v", st, got)
	}
	query := func(body string) map[string]any {
		t.Helper()
		st, out := call(t, hs, "POST", "/collections/h/points/query", body)
		if st != 200 {
			t.Fatalf("%s: %d %v", body, st, out)
		}
		return out
	}
	sparseQ := `{"indices":[2,1],"values":[1,1]}`
	sameHits(t, "sparse", query(`{"query":`+sparseQ+`,"using":"kw"}`), "[2 1 3]", 3, 2, 2)
	sameHits(t, "sparse nearest", query(`{"query":{"nearest":`+sparseQ+`},"using":"kw","limit":1}`), "[2]", 3)
	sameHits(t, "dense", query(`{"query":[0,0],"limit":3}`), "[1 2 3]", 0, 1, 3)
	st, out = call(t, hs, "POST", "/collections/h/points/search", `{"vector":{"name":"kw","vector":`+sparseQ+`},"limit":2}`)
	if st != 200 {
		t.Fatalf("search API, a NamedSparseVector: %d %v", st, out)
	}
	sameHits(t, "search API sparse", out, "[2 1]", 3, 2)
	if n := fmt.Sprint(query(`{"filter":{"must":[{"has_vector":"kw"}]},"limit":10}`)["result"]); strings.Count(n, "id:") != 3 {
		t.Fatalf("has_vector kw: %s", n)
	}
	prefetch := `[{"query":[0,0],"using":"","limit":3},{"query":` + sparseQ + `,"using":"kw","limit":3}]`
	// rrf, k = 2: dense [1 2 3], sparse [2 1 3]: 1 and 2 get 1/2 + 1/3
	// (1 first: it came first), 3 gets 1/4 + 1/4.
	sameHits(t, "rrf", query(`{"prefetch":`+prefetch+`,"query":{"fusion":"rrf"}}`), "[1 2 3]", 5.0/6, 5.0/6, 0.5)
	sameHits(t, "rrf k", query(`{"prefetch":`+prefetch+`,"query":{"rrf":{"k":60}},"limit":1}`), "[1]", 1.0/60+1.0/61)
	// dbsf over the distances [0 1 3] and the dots [3 2 2].
	norm := func(s float64, list ...float64) float64 {
		var mean, v float64
		for _, x := range list {
			mean += x / float64(len(list))
		}
		for _, x := range list {
			v += (x - mean) * (x - mean) / float64(len(list)-1)
		}
		sd := math.Sqrt(v)
		return (s - (mean - 3*sd)) / (6 * sd)
	}
	d1, d2, d3 := norm(0, 0, 1, 3), norm(1, 0, 1, 3), norm(3, 0, 1, 3)
	s2, s1 := norm(3, 3, 2, 2), norm(2, 3, 2, 2)
	sameHits(t, "dbsf", query(`{"prefetch":`+prefetch+`,"query":{"fusion":"dbsf"}}`), "[2 3 1]", d2+s2, d3+s1, d1+s1)
	// The filter reaches every prefetch: n >= 2 leaves dense [2 3 4], sparse [2 3].
	sameHits(t, "rrf filtered", query(`{"prefetch":`+prefetch+`,"query":{"fusion":"rrf"},"filter":{"must":[{"key":"n","range":{"gte":2}}]}}`),
		"[2 3 4]", 1.0, 1.0/3+1.0/3, 0.25)
	// Nested: the fused top 2 ({1, 2}) re-scored by distance to (1, 0).
	sameHits(t, "nested", query(`{"prefetch":{"prefetch":`+prefetch+`,"query":{"fusion":"rrf"},"limit":2},"query":[1,0]}`), "[2 1]", 0, 1)
	// A re-scoring over an empty prefetch finds nothing.
	sameHits(t, "empty prefetch", query(`{"prefetch":{"query":`+sparseQ+`,"using":"kw","filter":{"must":[{"key":"n","match":{"value":4}}]}},"query":[1,0]}`), "[]")
	if st, out := call(t, hs, "POST", "/collections/h/points/vectors/delete", `{"points":[2],"vector":["kw"]}`); st != 200 {
		t.Fatalf("delete_vectors: %d %v", st, out)
	}
	sameHits(t, "after delete_vectors", query(`{"query":{"indices":[2],"values":[1]},"using":"kw"}`), "[1]", 1)
	for _, bad := range []struct{ path, body, want string }{
		{"/points/query", `{"query":{"fusion":"rrf"}}`, "needs prefetch"},
		{"/points/query", `{"prefetch":` + prefetch + `,"query":{"fusion":"max"}}`, "fusion"},
		{"/points/query", `{"query":{"indices":[1],"values":[1]},"using":"nope"}`, "Not existing vector name"},
		{"/points/query", `{"query":[1,2],"using":"kw"}`, "sparse field"},
		{"/points/query", `{"query":{"indices":[1,1],"values":[1,2]},"using":"kw"}`, "twice"},
		{"/points/query", `{"query":{"indices":[-1],"values":[1]},"using":"kw"}`, "indices[0]"},
		{"/points/query", `{"prefetch":[{"query":[0,0],"limit":-1}],"query":{"fusion":"rrf"}}`, "limit"},
		{"/points", `{"points":[{"id":9,"vector":{"kw":{"indices":[1,2],"values":[1]}}}]}`, "2 indices and 1 values"},
		{"/points", `{"points":[{"id":9,"vector":{"":{"indices":[1],"values":[1]}}}]}`, "dense field"},
		{"/points", `{"points":[{"id":9,"vector":{"kw":[1,2]}}]}`, "sparse field"},
	} {
		method := "POST"
		if bad.path == "/points" {
			method = "PUT"
		}
		st, out := call(t, hs, method, "/collections/h"+bad.path, bad.body)
		status, _ := out["status"].(map[string]any)
		if st != 400 || !strings.Contains(fmt.Sprint(status["error"]), bad.want) {
			t.Errorf("%s: %d %v, want 400 naming %q", bad.body, st, out, bad.want)
		}
	}
	// A collection of sparse fields alone (langchain-qdrant's SPARSE mode).
	if st, out := call(t, hs, "PUT", "/collections/s", `{"vectors":{},"sparse_vectors":{"langchain-sparse":{}}}`); st != 200 {
		t.Fatalf("sparse-only create: %d %v", st, out)
	}
	if st, out := call(t, hs, "PUT", "/collections/s/points", `{"points":[{"id":"9f1c2d3e-0000-4000-8000-000000000001","vector":{"langchain-sparse":{"indices":[7],"values":[0.5]}}}]}`); st != 200 {
		t.Fatalf("sparse-only upsert: %d %v", st, out)
	}
	st, out = call(t, hs, "POST", "/collections/s/points/query", `{"query":{"indices":[7],"values":[2]},"using":"langchain-sparse","with_vector":true}`)
	if got := fmt.Sprint(out["result"]); st != 200 || !strings.Contains(got, "score:1") || !strings.Contains(got, "vector:map[langchain-sparse:map[indices:[7] values:[0.5]]]") {
		t.Fatalf("sparse-only query: %d %s", st, got)
	}
	st, out = call(t, hs, "GET", "/collections/s", "")
	if params := out["result"].(map[string]any)["config"].(map[string]any)["params"].(map[string]any); st != 200 || fmt.Sprint(params["vectors"]) != "map[]" {
		t.Fatalf("sparse-only info: %d %v", st, params)
	}
}
