package qdrant

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestPayloadSchemaFacetAndOrderByAnswerAsQdrant drives the door's payload
// index, facet, datetime order_by and payload ops by filter over HTTP:
// the shapes qdrant-client parses, and the figures local mode answers for
// the same points (tests/test_qdrant_filters.py compares with it live).
func TestPayloadSchemaFacetAndOrderByAnswerAsQdrant(t *testing.T) {
	hs := newTestDoor(t, "")
	must := func(method, path, body string) map[string]any {
		t.Helper()
		code, out := call(t, hs, method, path, body)
		if code != http.StatusOK {
			t.Fatalf("%s %s: %d %v", method, path, code, out)
		}
		return out
	}
	must("PUT", "/collections/c", `{"vectors": {"size": 2, "distance": "Manhattan"}}`)
	payloads := []string{
		`{"color": "red", "n": 1, "at": "2024-01-01T01:00:00+01:00", "loc": {"lon": 1, "lat": 2}}`,
		`{"color": ["red", "blue"], "n": 2.5, "at": "2023-12-31"}`,
		`{"color": "blue", "n": 3, "at": ["2024-06-15", "junk"], "loc": [{"lon": 0, "lat": 0}]}`,
		`{"color": true, "at": 5}`,
	}
	var points []string
	for i, p := range payloads {
		points = append(points, fmt.Sprintf(`{"id": %d, "vector": [%d, 0], "payload": %s}`, i, i, p))
	}
	must("PUT", "/collections/c/points", `{"points": [`+joinComma(points)+`]}`)
	for _, ix := range []string{`{"field_name": "color", "field_schema": "keyword"}`,
		`{"field_name": "n", "field_schema": {"type": "integer", "range": true}}`,
		`{"field_name": "at", "field_schema": "datetime"}`, `{"field_name": "loc", "field_schema": "geo"}`} {
		must("PUT", "/collections/c/index", ix)
	}
	schema := must("GET", "/collections/c", "")["result"].(map[string]any)["payload_schema"].(map[string]any)
	counts := map[string]string{}
	for field, v := range schema {
		info := v.(map[string]any)
		counts[field] = fmt.Sprint(info["data_type"], " ", info["points"])
	}
	want := map[string]string{"color": "keyword 3", "n": "integer 2", "at": "datetime 3", "loc": "geo 2"}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("payload_schema %v, want %v", counts, want)
	}
	if p := schema["n"].(map[string]any)["params"]; fmt.Sprint(p) != "map[range:true type:integer]" {
		t.Errorf("params %v", p)
	}
	must("DELETE", "/collections/c/index/loc", "")
	if _, ok := must("GET", "/collections/c", "")["result"].(map[string]any)["payload_schema"].(map[string]any)["loc"]; ok {
		t.Error("a deleted index is still in payload_schema")
	}

	hits := must("POST", "/collections/c/facet", `{"key": "color"}`)["result"].(map[string]any)["hits"]
	if got := fmt.Sprint(hits); got != "[map[count:2 value:blue] map[count:2 value:red] map[count:1 value:true]]" {
		t.Errorf("facet hits %s", got)
	}

	res := must("POST", "/collections/c/points/scroll", `{"order_by": {"key": "at", "direction": "desc", "start_from": "2024-01-01T00:00:00Z"}}`)
	var order []string
	for _, p := range res["result"].(map[string]any)["points"].([]any) {
		rec := p.(map[string]any)
		order = append(order, fmt.Sprint(rec["id"], "@", jsonText(rec["order_value"])))
	}
	// 2024-01-01T00:00Z is 1704067200000000 µs: point 0 is that instant,
	// point 1 the day before, point 3's 5 a number below both (as local
	// mode compares them); point 2 is past start_from, its junk no value.
	if got := fmt.Sprint(order); got != "[0@1704067200000000 1@1703980800000000 3@5]" {
		t.Errorf("order_by at desc: %s", got)
	}

	must("POST", "/collections/c/points/payload", `{"payload": {"seen": true}, "key": "meta.flags", "filter": {"must": [{"key": "color", "match": {"value": "red"}}]}}`)
	must("POST", "/collections/c/points/payload/clear", `{"points": [3]}`)
	res = must("POST", "/collections/c/points", `{"ids": [0, 1, 2, 3], "with_payload": ["meta", "n"]}`)
	var got []string
	for _, p := range res["result"].([]any) {
		got = append(got, jsonText(p.(map[string]any)["payload"]))
	}
	wantPayloads := `[{"meta":{"flags":{"seen":true}},"n":1} {"meta":{"flags":{"seen":true}},"n":2.5} {"n":3} {}]`
	if fmt.Sprint(got) != wantPayloads {
		t.Errorf("payloads after set by filter and clear: %v, want %s", got, wantPayloads)
	}
	code, out := call(t, hs, "POST", "/collections/c/points/payload", `{"payload": {"x": 1}, "points": [1, 77]}`)
	if code != http.StatusNotFound {
		t.Fatalf("set_payload on a missing id: %d %v, want 404", code, out)
	}
	res = must("POST", "/collections/c/points", `{"ids": [1], "with_payload": ["x"]}`)
	if got := jsonText(res["result"].([]any)[0].(map[string]any)["payload"]); got != `{"x":1}` {
		t.Errorf("the present point of a request naming a missing one: payload %s, want it written", got)
	}

	res = must("POST", "/collections/c/points/query", `{"query": [3, 1], "limit": 2}`)
	var scored []string
	for _, p := range res["result"].(map[string]any)["points"].([]any) {
		rec := p.(map[string]any)
		scored = append(scored, fmt.Sprint(rec["id"], "@", rec["score"]))
	}
	if got := fmt.Sprint(scored); got != "[3@1 2@2]" {
		t.Errorf("Manhattan scores %s, want [3@1 2@2] (the L1 distance, nearest first)", got)
	}
}

func joinComma(parts []string) string { return strings.Join(parts, ",") }

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
