package qdrant

import (
	"fmt"
	"testing"
)

// TestGetCollectionAnswersTheVectorsFormOfCreation guards get_collection's
// "vectors": Qdrant (and its local mode) answer the form a collection was
// created with, so {"": {...}} (LangChain's and LlamaIndex's form) is a
// map with the key "", though strata holds it as one unnamed vector.
func TestGetCollectionAnswersTheVectorsFormOfCreation(t *testing.T) {
	hs := newTestDoor(t, "")
	for name, c := range map[string]struct{ vectors, want string }{
		"single": {`{"size":2,"distance":"Dot"}`, "map[distance:Dot size:2]"},
		"empty":  {`{"":{"size":2,"distance":"Dot"}}`, "[]"},
		"named":  {`{"a":{"size":2,"distance":"Dot"}}`, "[a]"},
	} {
		if st, out := call(t, hs, "PUT", "/collections/"+name, `{"vectors":`+c.vectors+`}`); st != 200 {
			t.Fatalf("create %s: %d %v", name, st, out)
		}
		st, out := call(t, hs, "GET", "/collections/"+name, "")
		if st != 200 {
			t.Fatalf("get %s: %d %v", name, st, out)
		}
		vectors := out["result"].(map[string]any)["config"].(map[string]any)["params"].(map[string]any)["vectors"].(map[string]any)
		got := fmt.Sprint(vectors)
		if _, unnamed := vectors["size"]; !unnamed {
			var keys []string
			for k := range vectors {
				keys = append(keys, k)
			}
			got = fmt.Sprint(keys)
		}
		if got != c.want {
			t.Errorf("%s: vectors %v, want %s", name, vectors, c.want)
		}
	}
}
