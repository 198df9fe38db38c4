package server

import "testing"

// A text index made after creation serves text queries over the points
// written before it, as collection.CreateTextIndex promises.
func TestTextIndexRouteIndexesExistingPoints(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.fill(t, "c", 20)
	if status, out := ts.do(t, "POST", "/collections/c/query", map[string]any{"text": "point"}); status != 422 {
		t.Fatalf("text query before any text index: status %d %v, want 422", status, out)
	}
	out := ts.must(t, "POST", "/collections/c/text_index", map[string]any{"field": "text", "analyzer": "simple"})
	if out["text_index"] != "text" {
		t.Fatalf("text_index answered %v", out)
	}
	out = ts.must(t, "POST", "/collections/c/query", map[string]any{"text": "point 13", "k": 3})
	if ids := resultIDs(t, out["results"]); len(ids) == 0 || ids[0] != 13 {
		t.Fatalf("text query for \"point 13\": ids %v, want 13 first", ids)
	}
	if status, _ := ts.do(t, "POST", "/collections/c/text_index", map[string]any{"field": "text"}); status != 422 {
		t.Fatalf("indexing the same field twice: status %d, want 422", status)
	}
	if status, _ := ts.do(t, "POST", "/collections/c/text_index", map[string]any{"analyzer": "simple"}); status != 400 {
		t.Fatalf("text_index without a field: status %d, want 400", status)
	}
	if status, _ := ts.do(t, "POST", "/collections/c/text_index", map[string]any{"field": "i", "analyzer": "nope"}); status != 422 {
		t.Fatalf("text_index with an unknown analyzer: status %d, want 422", status)
	}
}

func TestCheckIntegrityRouteAnswersOK(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.fill(t, "c", 50)
	if out := ts.must(t, "POST", "/collections/c/check_integrity", map[string]any{}); out["ok"] != true {
		t.Fatalf("check_integrity of a sound collection: %v", out)
	}
	if status, _ := ts.do(t, "POST", "/collections/nope/check_integrity", map[string]any{}); status != 404 {
		t.Fatalf("check_integrity of a missing collection: status %d, want 404", status)
	}
}
