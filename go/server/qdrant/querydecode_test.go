package qdrant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
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
	`{"query": { "nearest" : [ 1e-3 , -0, 3.4028235e38 ] } ,"limit":3}`, `{"query":[0.5]}`,
	`{"query":{"nearest":[]}}`, `{"query":{"nearest":[1],"mmr":{}}}`, `{"query":{"nearest":[1e39]}}`,
	`{"query":{"nearest":[1,]}}`, `{"query":{"nearest":[1]},"lookup_from":{"collection":"c"}}`,
	`{"query":{"nearest":[1]},"query":[2]}`, `{"query":{"nearest":{"indices":[1],"values":[2]}}}`,
	`{"query":{"nearest":[1] ]}}`, `{"query":`, `{"query":{"nearest":[1,"2"]}}`, `{"query":{"nearest":[[1,2]]}}`,
	`{"params":{"HNSW_EF":3}}`, `{"params":{"hnsw_ef":1.0}}`, `{"params":{"hnsw_ef":-1,"exact":true}}`, `{"params":{}}`,
}

// checkAsEncodingJSON holds a decoder without reflection to
// encoding/json's strict decode of the same body: when decode answers, it
// answers the same request (a T) as encoding/json. fold, when not nil,
// first checks what decode read in another form than encoding/json's and
// moves it into that form.
func checkAsEncodingJSON[T any](t *testing.T, body []byte, decode func([]byte, *T) bool, fold func(got, want *T) error) {
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
	if fold != nil {
		if err := fold(&fast, &want); err != nil {
			t.Fatalf("%q: %v", body, err)
		}
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", body, fast, want)
	}
}

// foldNearest checks a query vector decodeQueryRequest read into nearest
// against encoding/json's []float32 of the same query (a list, or
// {"nearest": list}), bit for bit, and puts encoding/json's Query back.
func foldNearest(got, want *queryRequest) error {
	if got.nearest == nil {
		return nil
	}
	if got.Query != nil {
		return fmt.Errorf("both nearest and query %s", got.Query)
	}
	raw := bytes.TrimSpace(want.Query)
	if len(raw) > 0 && raw[0] == '{' {
		var q struct {
			Nearest json.RawMessage `json:"nearest"`
		}
		if err := strictUnmarshal(raw, &q); err != nil {
			return fmt.Errorf("nearest read from query %s, which is not {\"nearest\"}: %v", raw, err)
		}
		raw = q.Nearest
	}
	var v []float32
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("nearest read from %s, which encoding/json refuses: %v", raw, err)
	}
	if len(v) != len(got.nearest) {
		return fmt.Errorf("nearest %v, encoding/json %v", got.nearest, v)
	}
	for i := range v {
		if math.Float32bits(v[i]) != math.Float32bits(got.nearest[i]) {
			return fmt.Errorf("nearest[%d] %v, encoding/json %v", i, got.nearest[i], v[i])
		}
	}
	got.Query, got.nearest = want.Query, nil
	return nil
}

// checkQueryDecode holds decodeQueryRequest to encoding/json.
func checkQueryDecode(t *testing.T, body []byte) {
	checkAsEncodingJSON(t, body, decodeQueryRequest, foldNearest)
}

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
	if q = (queryRequest{}); !decodeQueryRequest([]byte(queryBodySeeds[0]), &q) || q.Query != nil ||
		!reflect.DeepEqual(q.nearest, []float32{0.1, 0.2}) {
		t.Fatalf("qdrant-client's nearest query: query %s, nearest %v (want nil, [0.1 0.2])", q.Query, q.nearest)
	}
	withLookup := `{"query":{"nearest":[1]},"lookup_from":{"collection":"c"}}`
	if q = (queryRequest{}); !decodeQueryRequest([]byte(withLookup), &q) || q.nearest != nil || q.Query == nil {
		t.Fatalf("%s: query %s, nearest %v (want the query kept for planQuery)", withLookup, q.Query, q.nearest)
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
