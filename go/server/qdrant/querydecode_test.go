package qdrant

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var queryBodySeeds = []string{
	`{"query":{"nearest":[0.1,0.2]},"params":{"hnsw_ef":64},"limit":10,"with_payload":true}`,
	`{"vector":[1,2,3],"limit":5,"offset":2,"score_threshold":0.5,"with_vector":["a"],"filter":{"must":[]}}`,
	`{"query":[1,2],"using":"text","lookup_from":{"collection":"c"},"shard_key":null,"prefetch":[{"limit":3}]}`,
	`{"using":null,"params":null,"limit":null,"offset":null,"score_threshold":null,"query":null}`,
	`{}`, `{"limit":1.5}`, `{"limit":1e1}`, `{"limit":-0}`, `{"limit":99999999999999999999}`, `{"LIMIT":3}`,
	`{"limit":1,"limit":2}`, `{"params":{"hnsw_ef":1},"params":{"exact":true}}`, `{"params":{"nope":1}}`,
	`{"params":{"exact":1}}`, `{"params":[]}`, `{"using":"a\u0062"}`, `{"using":5}`, `{"score_threshold":1e400}`,
	`{"score_threshold":"1"}`, `{"unknown":1}`, `{"limit":1} {}`, `{"limit":"10"}`, `[]`, `{"query":[1,]}`,
	`{"params":{"hnsw_ef":64,"exact":false,"quantization":{"rescore":true},"indexed_only":false,"acorn":null}}`,
	`{"params":{"hnsw_ef":null}}`, `{"params":{"hnsw_ef":1,"hnsw_ef":2}}`, `{"params":{"exact":null}}`,
	`{"params":{"HNSW_EF":3}}`, `{"params":{"hnsw_ef":1.0}}`, `{"params":{"hnsw_ef":-1,"exact":true}}`, `{"params":{}}`,
}

// checkAsEncodingJSON holds a decoder without reflection to
// encoding/json's strict decode of the same body: when decode answers, it
// answers the same request (a T) as encoding/json.
func checkAsEncodingJSON[T any](t *testing.T, body []byte, decode func([]byte, *T) bool) {
	var fast T
	if !decode(body, &fast) {
		return // the door reads it with encoding/json
	}
	var want T
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&want); err != nil || dec.More() {
		t.Fatalf("%q: decoded without reflection, but encoding/json says %v (more: %v)", body, err, dec.More())
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", body, fast, want)
	}
}

// checkQueryDecode holds decodeQueryRequest to encoding/json.
func checkQueryDecode(t *testing.T, body []byte) { checkAsEncodingJSON(t, body, decodeQueryRequest) }

// TestDecodeQueryRequestIsEncodingJSON: the reflection-free decode of the
// usual query bodies gives encoding/json's request, and leaves every
// other body (repeated keys, other spellings, wrong types) to it.
func TestDecodeQueryRequestIsEncodingJSON(t *testing.T) {
	for _, s := range queryBodySeeds {
		checkQueryDecode(t, []byte(s))
	}
	var q queryRequest
	if !decodeQueryRequest([]byte(queryBodySeeds[0]), &q) || !decodeQueryRequest([]byte(queryBodySeeds[1]), &q) {
		t.Fatal("qdrant-client's query bodies go to encoding/json")
	}
	for _, s := range []string{`{"limit":1,"limit":2}`, `{"LIMIT":3}`, `{"limit":1.5}`, `{"params":{"nope":1}}`} {
		if decodeQueryRequest([]byte(s), &q) {
			t.Fatalf("%s: decoded without encoding/json", s)
		}
	}
}

func FuzzDecodeQueryRequest(f *testing.F) {
	for _, s := range queryBodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkQueryDecode)
}

// BenchmarkDecodeQueryRequest: qdrant-client's query_points body.
func BenchmarkDecodeQueryRequest(b *testing.B) {
	body := []byte(`{"query":[` + strings.Repeat("0.123456789,", 127) + `0.5],"limit":10,` +
		`"params":{"hnsw_ef":64},"with_payload":false,"with_vector":false}`)
	b.ReportAllocs()
	for b.Loop() {
		req := new(queryRequest) // as decode's, on the heap
		if !decodeQueryRequest(body, req) {
			b.Fatal("not decoded")
		}
	}
}
