package qdrant

import (
	"encoding/json"
	"maps"
	"testing"
)

// jsonObjectSeeds are the shapes the query readers split, and the text
// at the edges of the one-pass splitter (escapes, numbers it must refuse,
// trailing data, deep nesting).
var jsonObjectSeeds = []string{
	`{"nearest":[0.1,-2,3e-5,1E+2]}`,
	`{"nearest": [1, 2], "mmr": {"diversity": 0.5}}`,
	` { "order_by" : { "key" : "a" , "direction" : "desc" } } `,
	`{"fusion":"rrf"}`, `{"formula":{"sum":["$score",{"mult":[2,"x"]}]},"defaults":{}}`,
	`{}`, `{"a":1,"a":2}`, `{"a":[]}`, `{"a":{}}`, `{"a":"\u00e9\n\"\\\/"}`, `{"a\u0062":1}`, `{"é":1}`,
	`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":.5}`, `{"a":1e}`, `{"a":tru}`, `{"a":nul}`, `{"a":"\x"}`,
	`{"a":"\u12"}`, `{"a":1}x`, `{"a":1}}`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":[1,]}`, `{"a":[1 2]}`,
	`{"a":"` + "\x01" + `"}`, `{"a":"` + "\xff" + `"}`, `[1]`, `"x"`, `null`, ``, `{`, `{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
}

// checkObjectFields holds objectFields to json.Unmarshal into a
// map[string]json.RawMessage: the same map, an error for the same text.
func checkObjectFields(t *testing.T, raw []byte) {
	var want map[string]json.RawMessage
	wantErr := json.Unmarshal(raw, &want)
	got, err := objectFields(raw)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, encoding/json's %v", raw, err, wantErr)
	}
	if err != nil {
		return
	}
	if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) || (got == nil) != (want == nil) {
		t.Fatalf("%q: %q, encoding/json's %q", raw, got, want)
	}
}

// TestObjectFieldsIsEncodingJSON: the one-pass splitter answers what
// encoding/json answers, for the query shapes and the text at its edges.
func TestObjectFieldsIsEncodingJSON(t *testing.T) {
	for _, s := range jsonObjectSeeds {
		checkObjectFields(t, []byte(s))
	}
	if _, ok := splitObject([]byte(`{"nearest":[0.1,-2],"limit":10}`)); !ok {
		t.Fatal("a plain query object goes to encoding/json")
	}
}

func FuzzObjectFields(f *testing.F) {
	for _, s := range jsonObjectSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkObjectFields)
}
