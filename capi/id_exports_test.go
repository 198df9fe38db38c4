package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
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

// TestPackedStringIDsAreReadAsLaidOut prevents strata_id_strings (kinds,
// offsets, bytes: Arrow's string column) from being misread: each id is
// the kind its byte says, a string the bytes between its offsets, and a
// layout that is not one (a bad kind, offsets out of order or not from 0,
// a NULL array) or an id no write accepts is STRATA_ERR_INVALID naming the
// problem, never a read outside the caller's arrays.
func TestPackedStringIDsAreReadAsLaidOut(t *testing.T) {
	ints := []uint64{0, 42, 0, 0}
	got, err := idsArg(cUint64s(ints), 4, cIDStrings([]uint8{1, 0, 1, 1}, "doc-1ünï🎉x", []int64{0, 5, 5, 14, 15}), "ids")
	want := []collection.ID{collection.StringID("doc-1"), collection.IntID(42), collection.StringID("ünï🎉"), collection.StringID("x")}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("idsArg = %v, %v; want %v", got, err, want)
	}
	if got, err := idsArg(cUint64s(ints[:2]), 2, nil, "ids"); err != nil || !slices.Equal(got, collection.IntIDs([]uint64{0, 42})) {
		t.Fatalf("idsArg without strings = %v, %v", got, err)
	}
	if got, err := idsArg(nil, 0, cIDStrings(nil, "", nil), "ids"); err != nil || len(got) != 0 {
		t.Fatalf("idsArg of none = %v, %v", got, err)
	}
	eb, el, msg := errBuffer()
	for _, c := range []struct {
		what    string
		kinds   []uint8
		data    string
		offsets []int64
		want    string
	}{
		{"a kind that is neither", []uint8{0, 2}, "ab", []int64{0, 0, 2}, "kinds[1] is 2"},
		{"offsets not from 0", []uint8{1, 1}, "ab", []int64{1, 1, 2}, "offsets[0] must be 0"},
		{"offsets going back", []uint8{1, 1}, "abc", []int64{0, 2, 1}, "not in order"},
		{"offsets past the end", []uint8{1, 1}, "abc", []int64{0, 4, 3}, "not in order"},
		{"a NULL kinds array", nil, "ab", []int64{0, 1, 2}, "kinds or offsets pointer is NULL"},
		{"a NULL offsets array", []uint8{1, 1}, "ab", nil, "kinds or offsets pointer is NULL"},
		{"an empty string", []uint8{1, 1}, "a", []int64{0, 1, 1}, "ids[1]"},
		{"a string over 512 bytes", []uint8{0, 1}, strings.Repeat("x", 513), []int64{0, 0, 513}, "ids[1]"},
		{"bytes that are not UTF-8", []uint8{1, 0}, "\xff\xfe", []int64{0, 2, 2}, "ids[0]"},
	} {
		rc := strata_check_ids(cUint64s([]uint64{0, 0}), 2, cIDStrings(c.kinds, c.data, c.offsets), eb, el)
		if rc != statusInvalid || !strings.Contains(msg(), c.want) {
			t.Errorf("%s: status %d, message %q; want %d containing %q", c.what, rc, msg(), statusInvalid, c.want)
		}
	}
	if rc := strata_check_ids(cUint64s([]uint64{1 << 63}), 1, nil, eb, el); rc != statusInvalid || !strings.Contains(msg(), "ids[0]") {
		t.Errorf("an integer id of 2^63: status %d, message %q", rc, msg())
	}
}
