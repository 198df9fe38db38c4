package qdrant

import (
	"fmt"
	"strings"
	"testing"
)

// TestUUIDSpellingsNameOnePointAnsweredCanonically prevents the door from
// treating two spellings of one UUID as two points, from answering with
// another spelling than Qdrant's, and from accepting strings Qdrant
// refuses: every spelling the uuid crate parses (simple, hyphenated,
// braced, urn, either case) is the same point, in upsert, retrieve,
// has_id, scroll offsets and delete, beside integer ids.
func TestUUIDSpellingsNameOnePointAnsweredCanonically(t *testing.T) {
	hs := newTestDoor(t, "")
	const canonical = "5c56c793-69f3-4fbf-87e6-c4bf54c28c26"
	spellings := []string{
		canonical,
		strings.ToUpper(canonical),
		strings.ReplaceAll(canonical, "-", ""),
		"{" + canonical + "}",
		"urn:uuid:" + canonical,
		"{5C56C793-69f3-4FBF-87e6-C4BF54C28C26}",
	}
	if st, out := call(t, hs, "PUT", "/collections/u", `{"vectors":{"":{"size":2,"distance":"Euclid"}},"sparse_vectors":{}}`); st != 200 {
		t.Fatalf("create with the unnamed vector as {\"\": ...}: %d %v", st, out)
	}
	for i, s := range spellings {
		body := fmt.Sprintf(`{"points":[{"id":%q,"vector":[%d,0],"payload":{"v":%d}},{"id":7,"vector":[9,9]}]}`, s, i, i)
		if st, out := call(t, hs, "PUT", "/collections/u/points?wait=true", body); st != 200 {
			t.Fatalf("upsert %q: %d %v", s, st, out)
		}
	}
	if _, out := call(t, hs, "POST", "/collections/u/points/count", `{}`); fmt.Sprint(out["result"]) != "map[count:2]" {
		t.Fatalf("%d spellings made %v points, want 2", len(spellings), out["result"])
	}
	last := len(spellings) - 1
	for _, s := range spellings {
		st, out := call(t, hs, "POST", "/collections/u/points", fmt.Sprintf(`{"ids":[%q, 7],"with_vector":false}`, s))
		got := fmt.Sprint(out["result"])
		want := fmt.Sprintf("[map[id:%s payload:map[v:%d] vector:<nil>] map[id:7 payload:map[] vector:<nil>]]", canonical, last)
		if st != 200 || got != want {
			t.Fatalf("retrieve %q: %d %s, want %s", s, st, got, want)
		}
	}
	st, out := call(t, hs, "POST", "/collections/u/points/query",
		`{"query":[0,0],"limit":5,"filter":{"must":[{"has_id":["`+spellings[2]+`"]}]}}`)
	if st != 200 || fmt.Sprint(out["result"]) != fmt.Sprintf("map[points:[map[id:%s payload:<nil> score:%d vector:<nil> version:0]]]", canonical, last) {
		t.Fatalf("query with has_id: %d %v", st, out)
	}
	st, out = call(t, hs, "POST", "/collections/u/points/scroll", `{"limit":1}`)
	if st != 200 || fmt.Sprint(out["result"]) != fmt.Sprintf("map[next_page_offset:%s points:[map[id:7 payload:map[] vector:<nil>]]]", canonical) {
		t.Fatalf("scroll, integers first: %d %v", st, out)
	}
	st, out = call(t, hs, "POST", "/collections/u/points/scroll", fmt.Sprintf(`{"limit":1,"offset":%q}`, spellings[1]))
	if st != 200 || fmt.Sprint(out["result"]) != fmt.Sprintf("map[next_page_offset:<nil> points:[map[id:%s payload:map[v:%d] vector:<nil>]]]", canonical, last) {
		t.Fatalf("scroll from a UUID offset (inclusive): %d %v", st, out)
	}
	if st, out := call(t, hs, "GET", "/collections/u/points/"+spellings[3], ""); st != 200 || out["result"].(map[string]any)["id"] != canonical {
		t.Fatalf("GET points/{braced uuid}: %d %v", st, out)
	}
	for _, bad := range []string{"not-a-uuid", canonical + "0", "urn:UUID:" + canonical, "{" + strings.ReplaceAll(canonical, "-", "") + "}",
		"5c56c793-69f3-4fbf-87e6-c4bf54c28c2g", ""} {
		st, out := call(t, hs, "PUT", "/collections/u/points", fmt.Sprintf(`{"points":[{"id":%q,"vector":[1,1]}]}`, bad))
		status, _ := out["status"].(map[string]any)
		if st != 400 || status == nil || !strings.Contains(fmt.Sprint(status["error"]), "UUID") {
			t.Errorf("id %q: %d %v, want Qdrant's 400 naming the UUID", bad, st, out)
		}
	}
	if st, out := call(t, hs, "POST", "/collections/u/points/delete?wait=true", fmt.Sprintf(`{"points":[%q]}`, spellings[4])); st != 200 {
		t.Fatalf("delete: %d %v", st, out)
	}
	if _, out := call(t, hs, "POST", "/collections/u/points/count", `{}`); fmt.Sprint(out["result"]) != "map[count:1]" {
		t.Fatalf("after deleting the UUID: %v", out["result"])
	}
}

// TestCreateTakesLangChainsSpellings prevents the first call of
// LangChain's QdrantVectorStore.from_texts (vectors {"": ...},
// sparse_vectors {} or a sparse field) from failing, and a sparse field
// with a modifier the engine lacks from being created.
func TestCreateTakesLangChainsSpellings(t *testing.T) {
	hs := newTestDoor(t, "")
	if st, out := call(t, hs, "PUT", "/collections/t", `{"vectors":{"size":2,"distance":"Cosine"},"sparse_vectors":{"text":{}}}`); st != 200 {
		t.Fatalf("a sparse field: %d %v", st, out)
	}
	st, out := call(t, hs, "PUT", "/collections/s", `{"vectors":{"size":2,"distance":"Cosine"},"sparse_vectors":{"text":{"modifier":"bm42"}}}`)
	if status, _ := out["status"].(map[string]any); st != 400 || !strings.Contains(fmt.Sprint(status["error"]), "modifier") {
		t.Fatalf("a sparse field of an unknown modifier: %d %v", st, out)
	}
	// Named vectors are fields now (vectors_test.go).
	if st, out := call(t, hs, "PUT", "/collections/n", `{"vectors":{"text":{"size":2,"distance":"Cosine"}}}`); st != 200 {
		t.Fatalf("a named vector: %d %v", st, out)
	}
	if st, out := call(t, hs, "GET", "/collections/s", ""); st != 404 {
		t.Fatalf("refused creates left a collection: %d %v", st, out)
	}
}
