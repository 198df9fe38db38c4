package server

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/strata-db/strata/go/collection"
)

// FuzzDecodeRequest feeds arbitrary bodies to the hand-written request
// readers (eachField, queryRequest.decode, parseVector, parseVectors,
// parseIDs): they must never panic, and whatever they accept must agree
// with encoding/json on the same bytes.
func FuzzDecodeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"vector": [1, 2.5, -3e-2], "k": 3, "ef": 16}`,
		`{"vectors": [[1, 2], [3, 4]], "k": 1, "filter": {"a": {"$gt": 1}}}`,
		`{"ids": [1, 2, 9007199254740993], "vectors": [[0, 0]]}`,
		`{"vector": [1e39]}`, `{"vector": [-0, 0.1, 838860.7, 8388607, 1.0000001, 0.0000000001, 12.5e1]}`, `{"vector": ["NaN"]}`, `{"vector": [1,]}`, `{"k": -1}`,
		`{"include": ["distances", "metadata"]}`, `{"include": [ ]}`, `{"include": ["a\"b", "é"]}`,
		`{"include": null}`, `{"include": ["x",]}`,
		`{"vector": [1, 2`, `[]`, `{"a": "\u00e9\ud800"}`, ``,
		`{"using": "kw", "sparse": {"indices": [1, 9], "values": [0.5, 2]}, "k": 2}`,
		`{"sparse": {"indices": [4294967295], "values": [1e-3]}}`, `{"sparse": {"indices": [-1], "values": [1]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req queryRequest
		_ = req.decode(body, nil)
		_ = eachField(body, func(key string, value []byte) error {
			if vec, err := parseVector(nil, value, key); err == nil {
				var ref []float32 // encoding/json rounds with strconv.ParseFloat(s, 32)
				if json.Unmarshal(value, &ref) != nil || len(ref) != len(vec) {
					t.Fatalf("parseVector accepted %q as %v; encoding/json disagrees", value, vec)
				}
				for i := range vec {
					if math.IsNaN(float64(vec[i])) || math.IsInf(float64(vec[i]), 0) {
						t.Fatalf("parseVector accepted a non-finite value from %q", value)
					}
					if math.Float32bits(vec[i]) != math.Float32bits(ref[i]) {
						t.Fatalf("parseVector read %v where encoding/json reads %v in %q", vec[i], ref[i], value)
					}
				}
			}
			_, _, _ = parseVectors(nil, value, 2, key)
			if idx, val, err := parseSparse(value, key); err == nil && (idx == nil || val == nil) {
				t.Fatalf("parseSparse accepted %q without indices or values", value)
			}
			_, _ = sparseValues(key, value, 1)
			if list, ok := plainStrings(nil, value); ok {
				var ref []string
				if err := json.Unmarshal(value, &ref); err != nil || !slices.Equal(list, ref) || ref == nil {
					t.Fatalf("plainStrings read %q as %q; encoding/json reads %q (%v)", value, list, ref, err)
				}
			}
			if ids, err := parseIDs(nil, value, key); err == nil {
				var ref []any
				dec := json.NewDecoder(bytes.NewReader(value))
				dec.UseNumber()
				if dec.Decode(&ref) != nil || len(ref) != len(ids) {
					t.Fatalf("parseIDs accepted %q as %v; encoding/json disagrees", value, ids)
				}
				for i := range ids {
					want := collection.NoID
					switch r := ref[i].(type) {
					case string:
						want = collection.StringID(r)
					case json.Number:
						if n, err := strconv.ParseUint(string(r), 10, 64); err == nil {
							want = collection.IntID(n)
						}
					}
					if ids[i] != want {
						t.Fatalf("parseIDs read %v where encoding/json reads %v in %q", ids[i], ref[i], value)
					}
				}
			}
			return nil
		})
	})
}
