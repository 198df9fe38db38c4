package meta

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"
)

// fuzzDocs is a small fixed collection that fuzzed filters run against.
var fuzzDocs = []string{
	`{}`,
	`{"a": null, "b": [1, "x", null, true]}`,
	`{"a": 1, "b": {"c": 2.5, "d": [], "e": {"f": "x"}}}`,
	`{"a": "1", "b": [0, 10], "c": false}`,
	`{"a": [1, 2], "b": {"c": "y"}, "c": true}`,
	`{"a": -0, "b": "ab", "n": {"x": {"y": null}}}`,
	`{"a": [{"x": 1, "y": [2, {"z": "x"}]}, {"x": null}, [1, [2]], 3], "b": [{"c": 2.5}, {"c": [0, 10]}]}`,
	`{"a": [[{"x": 1}], {"0": 5}, []], "b": {"c": [{"d": []}, {"d": [null]}]}, "c": [true, {}]}`,
}

// FuzzParseFilter: ParseFilter never panics, and an accepted filter
// evaluates without panicking and identically through Match and Select,
// over documents holding lists of objects and lists of lists.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": 1}`, `{"b.c": {"$gt": 2}}`, `{"$or": [{"a": null}, {"b": {"$in": [1, "x"]}}]}`,
		`{"a": {"$not": {"$exists": true}}}`, `{"b": [0, 10]}`, `{"b": {"c": "y"}}`, `{"$nor": [{"c": true}]}`,
		`{"a.x": 1}`, `{"a.0.x": {"$gte": 1}}`, `{"a": {"$elemMatch": {"x": 1, "y": {"$size": 2}}}}`,
		`{"a": {"$elemMatch": {"$elemMatch": {"$gt": 1}}}}`, `{"b.c": {"$all": [0, 10]}}`, `{"a": {"$size": 4}}`,
		`{"a": {"$type": ["object", "array", 16]}}`, `{"b.c": {"$not": {"$type": "double"}}}`, `{"a.1": [1, [2]]}`,
		`{"b.c.d": {"$all": [{"$elemMatch": {"$eq": null}}]}}`, `{"a": {"x": null}}`,
		`{"b": {"$regex": "^a", "$options": "i"}}`, `{"a.y.z": {"$elemMatch": {"$regex": "x|y"}}}`} {
		f.Add([]byte(s))
	}
	x := NewIndex()
	docs := make([]Document, len(fuzzDocs))
	for i, s := range fuzzDocs {
		docs[i] = mustDoc(f, s)
		x.Put(uint64(i), docs[i])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		flt, err := ParseFilter(data)
		if err != nil {
			return
		}
		var want []uint64
		for i, d := range docs {
			if flt.Match(d) {
				want = append(want, uint64(i))
			}
		}
		if got := x.Select(flt); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("Select %s = %v, Match says %v", data, got, want)
		}
	})
}

// FuzzParseDocument: ParseDocument and ReadDocument (the stored-data
// reader) never panic; ReadDocument accepts whatever ParseDocument does,
// with the same result; and the canonical JSON of anything ReadDocument
// accepts, old integers beyond 2^53 included, passes ParseDocument (input
// parsing) and is a fixed point.
func FuzzParseDocument(f *testing.F) {
	for _, s := range fuzzDocs {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"s": "\ud83d\ude00\u0000\"", "n": 1e-7, "m": 123456789012345678}`))
	f.Add([]byte(`{"m": 9007199254740993, "n": [-9007199254740992, 1.5e18, 18446744073709551616]}`))
	f.Add([]byte(`{"l": [{"b": 2, "a": [[], [{"k": "\u00e9"}]]}, [[[1]]]], "o": {"l": [{}]}}`))
	f.Add([]byte(`{"l": [{"k": 1, "k": 2}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		stored, err := ReadDocument(data)
		if err != nil {
			return
		}
		if d, err := ParseDocument(data); err == nil && !docsEqual(d, stored) {
			t.Fatalf("%q: ParseDocument gives %s, ReadDocument %s", data, d.JSON(), stored.JSON())
		}
		again, err := ParseDocument(stored.JSON())
		if err != nil {
			t.Fatalf("canonical JSON %s of %q does not parse: %v", stored.JSON(), data, err)
		}
		if !docsEqual(stored, again) {
			t.Fatalf("%q: %s reads back as %s", data, stored.JSON(), again.JSON())
		}
	})
}

// FuzzImport: Import never panics on arbitrary input; what it accepts
// exports back to an equivalent snapshot. The first input holds the ids
// and the second the offsets, 8 bytes each, little-endian.
func FuzzImport(f *testing.F) {
	x := NewIndex()
	for i, s := range fuzzDocs {
		x.Put(uint64(i*3), mustDoc(f, s))
	}
	ids, offsets, data := x.Export()
	f.Add(packUint64s(ids), packUint64s(offsets), data)
	f.Add(packUint64s(ids[:2]), packUint64s(offsets[:3]), data[:offsets[2]])
	f.Add([]byte{}, packUint64s([]uint64{0}), []byte{})
	old := []byte(`{"a":123456789012345680000}`) // as versions before 2^53 exactness wrote it
	f.Add(packUint64s([]uint64{7}), packUint64s([]uint64{0, uint64(len(old))}), old)
	f.Fuzz(func(t *testing.T, idBytes, offsetBytes, data []byte) {
		ids, offsets := unpackUint64s(idBytes), unpackUint64s(offsetBytes)
		y, err := Import(ids, offsets, data)
		if err != nil {
			return
		}
		ids2, offsets2, data2 := y.Export()
		if !slices.Equal(ids, ids2) || len(offsets2) != len(offsets) {
			t.Fatalf("re-export changed ids %v -> %v", ids, ids2)
		}
		z, err := Import(ids2, offsets2, data2)
		if err != nil {
			t.Fatalf("re-export does not import: %v", err)
		}
		if z.Len() != y.Len() || z.Count(mustFilter(t, `{"a": {"$exists": true}}`)) != y.Count(mustFilter(t, `{"a": {"$exists": true}}`)) {
			t.Fatal("re-imported index differs")
		}
	})
}

func packUint64s(v []uint64) []byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return b
}

func unpackUint64s(b []byte) []uint64 {
	v := make([]uint64, len(b)/8)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return v
}

// FuzzCheckJSONText: the doors' body check and the document reader agree
// on text. A document ParseDocument accepts passes CheckJSONText, and when
// CheckJSONText passes a document, ParseDocument does not refuse its text
// (invalid UTF-8, a lone surrogate).
func FuzzCheckJSONText(f *testing.F) {
	for _, s := range []string{`{"a":"\ud83d\ude00"}`, `{"\\ud800":1}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `{"a":"\\\ud800"}`, `{"a":"x\u0041"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checked := CheckJSONText(data)
		_, err := ParseDocument(data)
		if err == nil && checked != nil {
			t.Fatalf("%q: a valid document fails CheckJSONText: %v", data, checked)
		}
		if err != nil && checked == nil && (strings.Contains(err.Error(), "surrogate") || strings.Contains(err.Error(), "UTF-8")) {
			t.Fatalf("%q: CheckJSONText passes text ParseDocument refuses: %v", data, err)
		}
	})
}
