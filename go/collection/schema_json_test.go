package collection

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/metric"
)

// TestParseVectorFieldsFillsTheDocumentedDefaults prevents the doors'
// schema text from drifting from what schema_json.go documents: dim
// required, metric cosine, M 16, ef_construction 200, quantization none,
// a dense field; names kept as written, "" included.
func TestParseVectorFieldsFillsTheDocumentedDefaults(t *testing.T) {
	fields, err := ParseVectorFields([]byte(`{"": {"dim": 3}, "t": {"dim": 2, "metric": "ip", "M": 8,
		"ef_construction": 50, "quantization": "sq8", "multivector": "max_sim"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []VectorField{
		{Name: "", Dim: 3, Metric: metric.Cosine, M: 16, EfConstruction: 200},
		{Name: "t", Dim: 2, Metric: metric.IP, M: 8, EfConstruction: 50, Quantization: hnsw.QuantSQ8, Multivector: MaxSim},
	}
	if len(fields) != len(want) || fields[0] != want[0] || fields[1] != want[1] {
		t.Fatalf("parsed %+v, want %+v", fields, want)
	}
	for _, bad := range []struct{ json, want string }{
		{`[]`, "JSON object"}, {`{"a": 1}`, `"a"`}, {`{"a": {"dim": 2}} x`, "after the object"},
		{`{"a": {}}`, `"a": "dim" is required`}, {`{"a": {"dim": 2, "sparse": {}}}`, `"a"`},
		{`{"a": {"dim": 2}, "a": {"dim": 2}}`, `"a" given twice`}, {`{"a": {"dim": -1}}`, `"a"`},
		{`{"a": {"dim": 2, "quantization": "pq"}}`, `"a"`},
	} {
		_, err := ParseVectorFields([]byte(bad.json))
		if !errors.Is(err, batch.ErrInvalid) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseVectorFields(%s) = %v, want ErrInvalid saying %s", bad.json, err, bad.want)
		}
	}
}

// FuzzParseVectorFields prevents any schema text from panicking the
// parser, and any it accepts from holding a field the engine would refuse.
func FuzzParseVectorFields(f *testing.F) {
	f.Add([]byte(`{"": {"dim": 3}, "t": {"dim": 2, "metric": "ip", "multivector": "max_sim"}}`))
	f.Add([]byte(`{"a": {"dim": 2, "quantization": "sq8", "M": 4}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		fields, err := ParseVectorFields(raw)
		if err != nil {
			if !errors.Is(err, batch.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		for _, f := range fields {
			if _, err := f.withDefaults(); err != nil {
				t.Fatalf("accepted %+v, which the engine refuses: %v", f, err)
			}
		}
	})
}

// TestParseSparseFieldsReadsBothSpellings prevents the doors' sparse
// schema from drifting from schema_json.go's doc: a list of names (no
// modifier) or an object of name to {"modifier"}, null none.
func TestParseSparseFieldsReadsBothSpellings(t *testing.T) {
	for _, ok := range []struct {
		json string
		want []SparseField
	}{
		{`["kw", "b"]`, []SparseField{{Name: "kw"}, {Name: "b"}}},
		{`{"kw": {"modifier": "idf"}, "b": {}}`, []SparseField{{Name: "kw", Modifier: sparse.ModifierIDF}, {Name: "b"}}},
		{`null`, nil}, {``, nil}, {`[]`, nil}, {`{}`, nil},
	} {
		got, err := ParseSparseFields([]byte(ok.json))
		if err != nil || !slices.Equal(got, ok.want) {
			t.Errorf("ParseSparseFields(%s) = %+v, %v; want %+v", ok.json, got, err, ok.want)
		}
	}
	for _, bad := range []struct{ json, want string }{
		{`1`, "list of names"}, {`[1]`, "list of field names"}, {`[""]`, "needs a name"},
		{`["a", "a"]`, `"a" given twice`}, {`{"a": {}, "a": {}}`, `"a" given twice`},
		{`{"a": {"modifier": "bm25"}}`, `"a"`}, {`{"a": {"index": {}}}`, `"a"`},
		{`{"a": 1}`, `"a"`}, {`{"a": {}} x`, "after the object"}, {`["a"] x`, "after"},
	} {
		_, err := ParseSparseFields([]byte(bad.json))
		if !errors.Is(err, batch.ErrInvalid) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseSparseFields(%s) = %v, want ErrInvalid saying %s", bad.json, err, bad.want)
		}
	}
}

// FuzzParseSparseFields prevents any sparse schema text from panicking the
// parser, and any it accepts from holding a field the engine would refuse.
func FuzzParseSparseFields(f *testing.F) {
	f.Add([]byte(`["kw", "b"]`))
	f.Add([]byte(`{"kw": {"modifier": "idf"}, "b": {"modifier": "none"}}`))
	f.Add([]byte(`{"kw": {}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		fields, err := ParseSparseFields(raw)
		if err != nil {
			if !errors.Is(err, batch.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		if _, err := sparseSchemaOf(fields, nil); err != nil {
			t.Fatalf("accepted %+v, which the engine refuses: %v", fields, err)
		}
	})
}
