package main

import "testing"

// FuzzParseSchema prevents any create schema text (strata.h, "Vector
// fields": vectors, sparse_vectors, fsync, seed) from panicking the C
// ABI's reader or failing with anything but STRATA_ERR_INVALID.
func FuzzParseSchema(f *testing.F) {
	for _, seed := range []string{
		`{"vectors": {"": {"dim": 3}}, "fsync": "never", "seed": 7}`,
		`{"vectors": {"t": {"dim": 2}}, "sparse_vectors": ["kw", "b"]}`,
		`{"vectors": {}, "sparse_vectors": {"kw": {"modifier": "idf"}}}`,
		`{"vectors": {"t": {"dim": 2}}, "sparse_vectors": {"t": {}}}`, `{"sparse_vectors": []}`,
		`{"vectors": {}, "sparse_vectors": null, "x": 1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		opts, err := parseSchema(raw)
		if err != nil {
			if rc := classify(err); rc != statusInvalid {
				t.Fatalf("parseSchema(%q) failed with status %d, not STRATA_ERR_INVALID: %v", raw, rc, err)
			}
			return
		}
		for _, f := range opts.Sparse {
			if f.Name == "" {
				t.Fatalf("parseSchema(%q) accepted a sparse field without a name", raw)
			}
		}
	})
}
