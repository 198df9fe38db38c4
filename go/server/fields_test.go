package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestNamedVectorsGoInAndComeOutPerField prevents the native door from
// losing a field, a point's lack of one, or a multivector's rows: a
// schema of named fields is created, written per point (null: no value),
// queried by field (using), read back (get's "vectors"), changed field by
// field and in its schema, and shown by GET /collections/{name}.
func TestNamedVectorsGoInAndComeOutPerField(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.must(t, "POST", "/collections", `{"name": "n", "fsync": "never", "vectors": {
		"text": {"dim": 2, "metric": "l2"}, "tokens": {"dim": 2, "metric": "ip", "multivector": "max_sim"}}}`)
	ts.must(t, "POST", "/collections/n/upsert", `{"ids": ["a", 7, "b"],
		"vectors": {"text": [[0, 0], [1, 0], [5, 5]], "tokens": [null, [[1, 0]], [[0, 1], [0.5, 0.5]]]},
		"metadata": [{"k": 1}, {"k": 2}, {"k": 3}]}`)
	out := ts.must(t, "POST", "/collections/n/query", `{"vector": [0.9, 0], "k": 2, "using": "text", "include": ["metadata"]}`)
	if got := fmt.Sprint(out["results"]); got != "[map[id:7 metadata:map[k:2]] map[id:a metadata:map[k:1]]]" {
		t.Fatalf("query using text: %s", got)
	}
	out = ts.must(t, "POST", "/collections/n/query", `{"vectors": [[[0, 1]], [[1, 0]]], "k": 3, "using": "tokens", "include": []}`)
	if got := fmt.Sprint(out["results"]); got != "[[map[id:b] map[id:7]] [map[id:7] map[id:b]]]" {
		t.Fatalf("multivector batch query: %s", got)
	}
	out = ts.must(t, "POST", "/collections/n/get", `{"ids": ["a", 7, "b"], "include": [], "vectors": ["tokens", "text"]}`)
	want := "[map[id:a vectors:map[text:[0 0]]] map[id:7 vectors:map[text:[1 0] tokens:[[1 0]]]] " +
		"map[id:b vectors:map[text:[5 5] tokens:[[0 1] [0.5 0.5]]]]]"
	if got := fmt.Sprint(out["points"]); got != want {
		t.Fatalf("get vectors:\n got %s\nwant %s", got, want)
	}
	if out := ts.must(t, "POST", "/collections/n/update_vectors", `{"ids": ["a"], "vectors": {"tokens": [[[3, 3]]]}}`); out["updated"] != float64(1) {
		t.Fatalf("update_vectors: %v", out)
	}
	if out := ts.must(t, "POST", "/collections/n/delete_vectors", `{"ids": [7], "vectors": ["text"]}`); out["updated"] != float64(1) {
		t.Fatalf("delete_vectors: %v", out)
	}
	out = ts.must(t, "POST", "/collections/n/get", `{"ids": ["a", 7], "include": [], "vectors": ["tokens", "text"]}`)
	if got := fmt.Sprint(out["points"]); got != "[map[id:a vectors:map[text:[0 0] tokens:[[3 3]]]] map[id:7 vectors:map[tokens:[[1 0]]]]]" {
		t.Fatalf("get after update and delete: %s", got)
	}
	ts.must(t, "POST", "/collections/n/add_vector_field", `{"name": "image", "spec": {"dim": 3, "quantization": "sq8"}}`)
	ts.must(t, "POST", "/collections/n/remove_vector_field", `{"name": "text"}`)
	info := ts.must(t, "GET", "/collections/n", nil)
	var fields []string
	for _, f := range info["vectors"].([]any) {
		m := f.(map[string]any)
		fields = append(fields, fmt.Sprint(m["name"], "/", m["dim"], "/", m["multivector"], "/", m["points"]))
	}
	if got := strings.Join(fields, " "); got != "image/3/none/0 tokens/2/max_sim/3" {
		t.Fatalf("info vectors: %s", got)
	}
}

// TestBadNamedVectorsAre4xxNamingTheField prevents a malformed named
// write, query or schema change from being a 500 or an answer that does
// not say which field is wrong.
func TestBadNamedVectorsAre4xxNamingTheField(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.must(t, "POST", "/collections", `{"name": "n", "fsync": "never", "vectors": {
		"text": {"dim": 2}, "tokens": {"dim": 2, "multivector": "max_sim"}}}`)
	for _, c := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/collections", `{"name": "m", "dim": 2, "vectors": {"a": {"dim": 2}}}`, 422, "not both"},
		{"/collections", `{"name": "m", "vectors": {"a": {"dim": 2, "sparse": true}}}`, 422, `"a"`},
		{"/collections/n/upsert", `{"ids": [1], "vectors": {"nope": [[1, 2]]}}`, 422, `"nope"`},
		{"/collections/n/upsert", `{"ids": [1], "vectors": {"text": [[1, 2, 3]]}}`, 422, `"text"`},
		{"/collections/n/upsert", `{"ids": [1, 2], "vectors": {"text": [[1, 2]]}}`, 422, `"text"`},
		{"/collections/n/upsert", `{"ids": [1], "vectors": {"tokens": [[1, 2]]}}`, 422, `"tokens"`},
		{"/collections/n/query", `{"vector": [1, 2], "using": "nope"}`, 422, `"nope"`},
		{"/collections/n/query", `{"vector": [1, 2, 3], "using": "text"}`, 422, `"text"`},
		{"/collections/n/query", `{"vector": [1, 2], "using": "tokens"}`, 422, "vector"},
		{"/collections/n/update_vectors", `{"ids": ["gone"], "vectors": {"text": [[1, 2]]}}`, 404, "gone"},
		{"/collections/n/delete_vectors", `{"ids": [], "vectors": ["nope"]}`, 422, `"nope"`},
		{"/collections/n/add_vector_field", `{"name": "text", "spec": {"dim": 2}}`, 409, `"text"`},
		{"/collections/n/remove_vector_field", `{"name": "nope"}`, 404, `"nope"`},
	} {
		st, out := ts.do(t, "POST", c.path, c.body)
		if msg := fmt.Sprint(out["error"]); st != c.status || !strings.Contains(msg, c.want) {
			t.Errorf("POST %s %s: %d %v; want %d naming %s", c.path, c.body, st, out, c.status, c.want)
		}
	}
}
