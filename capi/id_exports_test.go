package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/collection"
)

// The JSON of an answer's ids is what bindings decode into ints, strs and
// None: a string that needs escaping, a large integer or padding must come
// back as written.
func TestIDsJSONDecodesToTheIDsWritten(t *testing.T) {
	ids := []collection.ID{collection.IntID(0), collection.StringID(`a"b\c<&>`), collection.IntID(1<<63 - 1),
		collection.StringID("ünï\u2028cödé 🎉"), collection.NoID}
	var got []any
	dec := json.NewDecoder(bytes.NewReader(idsJSON(ids)))
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("idsJSON = %s: %v", idsJSON(ids), err)
	}
	want := []any{json.Number("0"), `a"b\c<&>`, json.Number("9223372036854775807"), "ünï\u2028cödé 🎉", nil}
	if !slices.Equal(got, want) {
		t.Fatalf("decoded %#v, want %#v", got, want)
	}
	if s := string(idsJSON(nil)); s != "[]" {
		t.Fatalf("idsJSON(nil) = %s, want []", s)
	}
}
