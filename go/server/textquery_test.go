package server

import (
	"fmt"
	"math"
	"testing"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/text"
)

// TestTextQueryAnswersAsTheEngine guards the text and hybrid forms of
// /query against drifting from collection.QueryText: every hit's id, score,
// distance and sources must be the engine's, for text alone, hybrid with
// each fusion, BM25 parameters and a filter.
func TestTextQueryAnswersAsTheEngine(t *testing.T) {
	ts := newTestServer(t, Config{})
	info := ts.must(t, "POST", "/collections", map[string]any{"name": "docs", "dim": 4, "metric": "l2", "seed": 3,
		"text_fields": []string{"body"}, "text_analyzer": "english"})
	if fields := fmt.Sprint(info["text_fields"]); fields != "[map[analyzer:english docs:0 field:body terms:0]]" {
		t.Fatalf("text_fields in info: %s", fields)
	}
	words := []string{"red", "green", "blue", "cats", "dogs", "running", "quick", "brown"}
	n := 120
	ids, vecs, docs := make([]int, n), make([][]float32, n), make([]map[string]any, n)
	for i := range n {
		ids[i] = i
		vecs[i] = []float32{float32(i % 11), float32(i % 5), float32(i % 3), 1}
		docs[i] = map[string]any{"i": i, "body": fmt.Sprintf("%s %s %s", words[i%8], words[(i/8)%8], words[(i*7)%8])}
	}
	ts.must(t, "POST", "/collections/docs/upsert", map[string]any{"ids": ids, "vectors": vecs, "metadata": docs})
	c, err := ts.reg.Get("docs")
	if err != nil {
		t.Fatal(err)
	}
	// The vectors tie often: seal every row into one segment first, so the
	// door's search and the engine's below rank ties in the same graph
	// rather than one in the tail and one after the builder moved them.
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	vector := []float32{3, 2, 1, 1}
	cases := []struct {
		name   string
		body   map[string]any
		vector []float32
		q      collection.TextQuery
		f      string
		fusion text.Fusion
	}{
		{"text alone", map[string]any{"text": "red cats"}, nil, collection.TextQuery{Text: "red cats"}, "", text.Fusion{}},
		{"text with k1 and b", map[string]any{"text": "quick dogs", "k1": 0.5, "b": 0.0}, nil,
			collection.TextQuery{Text: "quick dogs", BM25: text.Params{K1: 0.5, HasK1: true, HasB: true}}, "", text.Fusion{}},
		{"hybrid rrf", map[string]any{"text": "blue running", "vector": vector, "fusion": "rrf"}, vector,
			collection.TextQuery{Text: "blue running"}, "", text.Fusion{}},
		{"hybrid alpha", map[string]any{"text": "brown", "vector": vector, "fusion": map[string]any{"alpha": 0.3}, "text_field": "body"},
			vector, collection.TextQuery{Text: "brown", Field: "body"}, "", text.Fusion{Weighted: true, Alpha: 0.3}},
		{"hybrid filtered", map[string]any{"text": "green", "vector": vector, "filter": map[string]any{"i": map[string]any{"$lt": 60}}},
			vector, collection.TextQuery{Text: "green"}, `{"i":{"$lt":60}}`, text.Fusion{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.body["k"] = 7
			out := ts.must(t, "POST", "/collections/docs/query", tc.body)
			f, err := meta.ParseFilter([]byte(tc.f))
			if err != nil {
				t.Fatal(err)
			}
			want, err := c.QueryText(tc.vector, tc.q, 7, 0, f, 1, tc.fusion)
			if err != nil {
				t.Fatal(err)
			}
			got := out["results"].([]any)
			if len(got) != len(want) || len(want) == 0 {
				t.Fatalf("got %d hits, the engine %d", len(got), len(want))
			}
			for i, w := range want {
				hit := got[i].(map[string]any)
				if hit["id"] != float64(w.ID.Int()) || float32(hit["score"].(float64)) != w.Score ||
					hit["sources"] != sourceNames[w.Sources] || hit["metadata"] == nil {
					t.Fatalf("hit %d: got %v, the engine %+v", i, hit, w)
				}
				if d, ok := hit["distance"].(float64); ok != !math.IsNaN(float64(w.Distance)) || (ok && float32(d) != w.Distance) {
					t.Fatalf("hit %d distance: got %v, the engine %v", i, hit["distance"], w.Distance)
				}
			}
		})
	}
}

// TestTextQueryRefusesBadInput guards the status of each malformed text
// query: shape errors are 400, values the engine refuses are 422.
func TestTextQueryRefusesBadInput(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.fill(t, "plain", 10)
	ts.must(t, "POST", "/collections", map[string]any{"name": "two", "dim": 4, "text_fields": []string{"a", "b"}})
	for _, tc := range []struct {
		name, path, body string
		status           int
	}{
		{"no text index", "/collections/plain/query", `{"text":"point"}`, 422},
		{"field needed", "/collections/two/query", `{"text":"x"}`, 422},
		{"unknown field", "/collections/two/query", `{"text":"x","text_field":"c"}`, 422},
		{"batch with text", "/collections/two/query", `{"text":"x","text_field":"a","vectors":[[1,2,3,4]]}`, 400},
		{"wrong dim hybrid", "/collections/two/query", `{"text":"x","text_field":"a","vector":[1,2,3]}`, 422},
		{"fusion name", "/collections/two/query", `{"text":"x","text_field":"a","fusion":"max"}`, 422},
		{"fusion shape", "/collections/two/query", `{"text":"x","text_field":"a","fusion":{"beta":1}}`, 400},
		{"alpha out of range", "/collections/two/query", `{"text":"x","text_field":"a","fusion":{"alpha":2}}`, 422},
		{"b out of range", "/collections/two/query", `{"text":"x","text_field":"a","b":1.5}`, 422},
		{"k1 as string", "/collections/two/query", `{"text":"x","text_field":"a","k1":"1"}`, 400},
		{"text as number", "/collections/two/query", `{"text":5}`, 400},
		{"fusion without text", "/collections/two/query", `{"vector":[1,2,3,4],"fusion":"rrf"}`, 400},
		{"bad analyzer", "/collections", `{"name":"x","dim":4,"text_fields":["a"],"text_analyzer":"klingon"}`, 422},
		{"bad text field", "/collections", `{"name":"y","dim":4,"text_fields":["a..b"]}`, 422},
		{"non-string text value", "/collections/two/upsert", `{"ids":[1],"vectors":[[1,2,3,4]],"metadata":[{"a":5}]}`, 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := ts.do(t, "POST", tc.path, tc.body)
			if status != tc.status || out["error"] == nil {
				t.Fatalf("got %d %v, want %d", status, out, tc.status)
			}
		})
	}
}
