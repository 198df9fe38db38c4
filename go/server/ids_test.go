package server

import (
	"fmt"
	"testing"
)

// TestStringIDsGoInAndComeOutAsWritten prevents the native door from
// turning string ids into numbers or dropping them: JSON ids are numbers
// or strings in upsert, get, scan (after, next_after), query, delete and
// GET points/{id}, and answers carry each id in the kind written.
func TestStringIDsGoInAndComeOutAsWritten(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.must(t, "POST", "/collections", map[string]any{"name": "s", "dim": 2, "metric": "l2"})
	ts.must(t, "POST", "/collections/s/upsert", `{"ids":["doc-1", 5, "é\n\"q\"", "123"],"vectors":[[0,0],[1,1],[2,2],[3,3]],
		"metadata":[{"a":1},{"a":2},{"a":3},{"a":4}]}`)
	out := ts.must(t, "POST", "/collections/s/get", `{"ids":["123", 123, "doc-1", "nope"]}`)
	if got := fmt.Sprint(out["points"]); got != "[map[id:123 metadata:map[a:4]] map[id:doc-1 metadata:map[a:1]]]" {
		t.Fatalf("get: %s", got)
	}
	if id := out["points"].([]any)[0].(map[string]any)["id"]; id != "123" {
		t.Fatalf("the string id \"123\" came back as %T %v", id, id)
	}
	out = ts.must(t, "POST", "/collections/s/scan", `{"limit":2}`)
	if fmt.Sprint(out["points"]) != "[map[id:5 metadata:map[a:2]] map[id:123 metadata:map[a:4]]]" || out["next_after"] != "123" {
		t.Fatalf("scan page 1: %v", out)
	}
	out = ts.must(t, "POST", "/collections/s/scan", `{"limit":2,"after":"123"}`)
	if fmt.Sprint(out["points"]) != "[map[id:doc-1 metadata:map[a:1]] map[id:é\n\"q\" metadata:map[a:3]]]" {
		t.Fatalf("scan page 2: %v", out)
	}
	out = ts.must(t, "POST", "/collections/s/query", `{"vector":[2.1,2.1],"k":2,"include":["metadata"]}`)
	if fmt.Sprint(out["results"]) != "[map[id:é\n\"q\" metadata:map[a:3]] map[id:123 metadata:map[a:4]]]" {
		t.Fatalf("query: %v", out["results"])
	}
	if st, out := ts.do(t, "GET", "/collections/s/points/doc-1", nil); st != 200 || out["id"] != "doc-1" {
		t.Fatalf("GET points/doc-1: %d %v", st, out)
	}
	if st, out := ts.do(t, "GET", "/collections/s/points/5", nil); st != 200 || out["id"] != float64(5) {
		t.Fatalf("GET points/5: %d %v", st, out)
	}
	if out := ts.must(t, "POST", "/collections/s/delete", `{"ids":["doc-1", "123", 123]}`); out["deleted"] != float64(2) {
		t.Fatalf("delete: %v", out)
	}
}
