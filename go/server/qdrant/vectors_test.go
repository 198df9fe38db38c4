package qdrant

import (
	"fmt"
	"strings"
	"testing"
)

// TestNamedVectorsThroughTheDoor prevents the door from mixing up fields:
// a collection of a dense text field (Cosine), a dense image field
// (Euclid) and a multivector field; points with some of them; search with
// using and with a NamedVector; update_vectors and delete_vectors of one
// field; has_vector; records showing each point's fields by name.
func TestNamedVectorsThroughTheDoor(t *testing.T) {
	hs := newTestDoor(t, "")
	if st, out := call(t, hs, "PUT", "/collections/c", `{"vectors":{
		"text":{"size":2,"distance":"Cosine"},
		"image":{"size":3,"distance":"Euclid"},
		"colbert":{"size":2,"distance":"Dot","multivector_config":{"comparator":"max_sim"}}}}`); st != 200 {
		t.Fatalf("create: %d %v", st, out)
	}
	st, out := call(t, hs, "GET", "/collections/c", "")
	vectors := fmt.Sprint(out["result"].(map[string]any)["config"].(map[string]any)["params"].(map[string]any)["vectors"])
	if st != 200 || vectors == "" {
		t.Fatalf("info: %d %v", st, out)
	}
	for _, want := range []string{"text:map[", "image:map[", "colbert:map[", "comparator:max_sim"} {
		if !strings.Contains(vectors, want) {
			t.Errorf("collection info vectors %s lack %q", vectors, want)
		}
	}
	points := `{"points":[
		{"id":1,"vector":{"text":[1,0],"image":[0,0,0],"colbert":[[1,0],[0,1]]},"payload":{"n":1}},
		{"id":2,"vector":{"text":[0,1]},"payload":{"n":2}},
		{"id":3,"vector":{"image":[5,5,5],"colbert":[[0,1]]}}]}`
	if st, out := call(t, hs, "PUT", "/collections/c/points", points); st != 200 {
		t.Fatalf("upsert: %d %v", st, out)
	}
	ids := func(out map[string]any) string {
		var got []any
		res := out["result"]
		if m, ok := res.(map[string]any); ok {
			res = m["points"]
		}
		for _, p := range res.([]any) {
			got = append(got, p.(map[string]any)["id"])
		}
		return fmt.Sprint(got)
	}
	for _, tc := range []struct{ path, body, want string }{
		{"/points/query", `{"query":[0,1],"using":"text"}`, "[2 1]"},
		{"/points/query", `{"query":[5,5,4],"using":"image"}`, "[3 1]"},
		{"/points/search", `{"vector":{"name":"image","vector":[0,0,1]}}`, "[1 3]"},
		{"/points/query", `{"query":[[0,1]],"using":"colbert"}`, "[1 3]"},
		{"/points/query", `{"query":[0,1],"using":"text","filter":{"must":[{"has_vector":"image"}]}}`, "[1]"},
	} {
		st, out := call(t, hs, "POST", "/collections/c"+tc.path, tc.body)
		if st != 200 {
			t.Fatalf("%s %s: %d %v", tc.path, tc.body, st, out)
		}
		if got := ids(out); got != tc.want {
			t.Errorf("%s %s: ids %s, want %s", tc.path, tc.body, got, tc.want)
		}
	}
	// MAX_SIM score over Dot: point 1 has [0,1] for the query [0,1]: 1.
	_, out = call(t, hs, "POST", "/collections/c/points/query", `{"query":[[0,1]],"using":"colbert"}`)
	if score := out["result"].(map[string]any)["points"].([]any)[0].(map[string]any)["score"]; fmt.Sprint(score) != "1" {
		t.Errorf("MAX_SIM score %v, want 1", score)
	}
	if st, out := call(t, hs, "PUT", "/collections/c/points/vectors", `{"points":[{"id":2,"vector":{"image":[1,1,1]}}]}`); st != 200 {
		t.Fatalf("update_vectors: %d %v", st, out)
	}
	if st, out := call(t, hs, "POST", "/collections/c/points/vectors/delete", `{"points":[1],"vector":["text"]}`); st != 200 {
		t.Fatalf("delete_vectors: %d %v", st, out)
	}
	st, out = call(t, hs, "POST", "/collections/c/points", `{"ids":[1,2],"with_vector":true}`)
	if st != 200 {
		t.Fatalf("retrieve: %d %v", st, out)
	}
	got := fmt.Sprint(out["result"])
	for _, want := range []string{"vector:map[colbert:[[1 0] [0 1]] image:[0 0 0]]", "vector:map[image:[1 1 1] text:[0 1]]"} {
		if !strings.Contains(got, want) {
			t.Errorf("retrieve: %s lacks %s", got, want)
		}
	}
	for _, tc := range []struct{ body, what string }{
		{`{"points":[{"id":9,"vector":{"nope":[1,2]}}]}`, "an unknown vector name"},
		{`{"points":[{"id":9,"vector":{"text":[1,2,3]}}]}`, "a vector of the wrong size"},
		{`{"points":[{"id":9,"vector":{"colbert":[1,2]}}]}`, "a multivector given as one vector"},
	} {
		if st, out := call(t, hs, "PUT", "/collections/c/points", tc.body); st != 400 {
			t.Errorf("upsert of %s: %d %v, want 400", tc.what, st, out)
		}
	}
	if st, out := call(t, hs, "POST", "/collections/c/points/query", `{"query":[1,0],"using":"nope"}`); st != 400 {
		t.Errorf("query of an unknown vector name: %d %v, want 400", st, out)
	}
}

// TestEuclidMaxSimScoresAsLocalMode pins the Euclid MAX_SIM score to
// qdrant-client's local mode: √(Σ of the least squared distances), lower
// first ([[0,1],[3,3]] against [[0,0],[3,4]] is √2, against [[1,1]] 3).
func TestEuclidMaxSimScoresAsLocalMode(t *testing.T) {
	hs := newTestDoor(t, "")
	if st, out := call(t, hs, "PUT", "/collections/e", `{"vectors":{"ce":{"size":2,"distance":"Euclid","multivector_config":{"comparator":"max_sim"}}}}`); st != 200 {
		t.Fatalf("create: %d %v", st, out)
	}
	if st, out := call(t, hs, "PUT", "/collections/e/points", `{"points":[{"id":1,"vector":{"ce":[[0,0],[3,4]]}},{"id":3,"vector":{"ce":[[1,1]]}}]}`); st != 200 {
		t.Fatalf("upsert: %d %v", st, out)
	}
	st, out := call(t, hs, "POST", "/collections/e/points/query", `{"query":[[0,1],[3,3]],"using":"ce"}`)
	if st != 200 {
		t.Fatalf("query: %d %v", st, out)
	}
	var got []string
	for _, p := range out["result"].(map[string]any)["points"].([]any) {
		got = append(got, fmt.Sprintf("%v:%.4f", p.(map[string]any)["id"], p.(map[string]any)["score"]))
	}
	if fmt.Sprint(got) != "[1:1.4142 3:3.0000]" {
		t.Errorf("scores %v, want [1:1.4142 3:3.0000] (local mode's)", got)
	}
}
