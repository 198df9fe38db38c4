package qdrant

import (
	"testing"
)

var upsertBodySeeds = []string{
	`{"points":[{"id":1,"vector":[0.1,0.2],"payload":{"bucket":1}},{"id":"5c56c793-69f3-4fbf-87e6-c4bf54c28c26","vector":{"a":[1]},"payload":null}]}`,
	`{"batch":{"ids":[1,2],"vectors":[[1,2],[3,4]],"payloads":[{"a":1},null]}}`,
	`{"batch":{"ids":[],"vectors":[]},"shard_key":null,"update_filter":{"must":[]},"update_mode":"upsert"}`,
	`{"points":[]}`, `{"points":null}`, `{"batch":null}`, `{}`, `{"points":[{}]}`, `{"points":[1]}`,
	`{"points":[{"id":1,"strata_ttl":60,"strata_expires_at":null}]}`, `{"points":[{"id":1,"strata_ttl":"60"}]}`,
	`{"points":[{"id":1,"id":2}]}`, `{"points":[],"points":[]}`, `{"Points":[]}`, `{"points":[{"ID":1}]}`,
	`{"batch":{"ids":[1],"strata_ttl":[5]}}`, `{"batch":{"ids":null}}`, `{"batch":{"ids":[1],"ids":[2]}}`,
	`{"update_mode":"in\u0073ert"}`, `{"update_mode":5}`, `{"update_mode":null}`, `{"points":[{"id":1}]} {}`,
	`{"points":[{"id":1,"vector":[1,]}]}`, `{"points":[ {"id" : 1 , "vector" : [ 1 , 2 ] } , {"id":2} ]}`,
	`{"points":[{"id":1,"nope":1}]}`, `{"batch":{"ids":[1],"payloads":[ {} , [] ]}}`, `[]`,
	`{"batch":{"ids":[1],"vectors":[[1,2]]},"batch":{"ids":[2]}}`, `{"points":[{"id":1,"vector":[1]}],"points":null}`,
	`{"points":[{"id":1} {"id":2}]}`, `{"points":[{"id":1},]}`, `{"batch": {"ids":[1] "vectors":[]}}`,
	`{ "points" : [ ] , "batch" : { } }`, `{"points":[{"id":1,"vector":[1,2],"payload":{"a":[1,{"b":null}]}}] }`,
	`{"batch":{"ids":[1],"vectors":[[1e39]],"payloads":[{"a":"\u00e9"}]}}`, `{"points":[{"id":1,"vector":[1,2]`,
}

// checkUpsertDecode holds decodeUpsertRequest to encoding/json.
func checkUpsertDecode(t *testing.T, body []byte) {
	checkAsEncodingJSON(t, body, decodeUpsertRequest, nil)
}

// TestDecodeUpsertRequestIsEncodingJSON: the reflection-free decode of
// qdrant-client's upsert bodies gives encoding/json's request, and
// leaves every other body (repeated keys, other spellings, expiry lists
// of a batch) to it.
func TestDecodeUpsertRequestIsEncodingJSON(t *testing.T) {
	for _, s := range upsertBodySeeds {
		checkUpsertDecode(t, []byte(s))
	}
	for _, s := range upsertBodySeeds[:3] {
		var u upsertRequest
		if !decodeUpsertRequest([]byte(s), &u) {
			t.Fatalf("%s: qdrant-client's upsert body goes to encoding/json", s)
		}
	}
	for _, s := range []string{`{"points":[],"points":[]}`, `{"Points":[]}`, `{"batch":{"ids":[1],"strata_ttl":[5]}}`, `{"points":null}`} {
		var u upsertRequest
		if decodeUpsertRequest([]byte(s), &u) {
			t.Fatalf("%s: decoded without encoding/json", s)
		}
	}
}

func FuzzDecodeUpsertRequest(f *testing.F) {
	for _, s := range upsertBodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkUpsertDecode)
}
