package collection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
)

// The vector schema as the doors spell it in JSON (the C ABI's
// strata_col_create_schema and strata_col_add_vector_field, the native
// REST API's "vectors" of a create and its vector_fields route):
//
//	{"<name>": {"dim": 50, "metric": "cosine", "M": 16, "ef_construction": 200,
//	            "quantization": "none" | "sq8", "multivector": "max_sim",
//	            "memory": "ram" | "mmap", "rescore": true | false}, ...}
//
// dim is required; metric defaults to "cosine" (strata.Collection.create's
// default), M and ef_construction to 16 and 200, quantization to "none",
// multivector to a dense field, memory to "ram" (memory.go), rescore to
// true for an "sq8" field (its float vectors kept and its searches
// re-scored with them; false: codes only, VectorField.CodesOnly) and it
// is refused for a field of floats, which has nothing to re-score. A key not listed is refused, so a later
// kind of field (sparse) is a new key, never a misread one. Parsing lives
// here so that every door reads the same text the same way.
//
// Sparse fields (the "sparse_vectors" of the same documents) are either a
// JSON array of names, each a field without modifier, or an object of
// name to spec:
//
//	["keywords", ...]  or  {"<name>": {"modifier": "none" | "idf"}, ...}
//
// modifier defaults to "none"; "idf" scores as Qdrant's IDF modifier
// (package sparse). ParseSparseFields reads both.

// fieldJSON is one field's spec as the doors send it.
type fieldJSON struct {
	Dim            *int    `json:"dim"`
	Metric         *string `json:"metric"`
	M              int     `json:"M"`
	EfConstruction int     `json:"ef_construction"`
	Quantization   *string `json:"quantization"`
	Multivector    *string `json:"multivector"`
	Memory         *string `json:"memory"`
	Rescore        *bool   `json:"rescore"`
}

// ParseVectorField reads the JSON spec of the field named name (the value
// of one key of a schema, above). Errors wrap ErrInvalid and name the
// field.
func ParseVectorField(name string, raw []byte) (VectorField, error) {
	var s fieldJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return VectorField{}, fmt.Errorf("%w: vector field %q: %v", ErrInvalid, name, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return VectorField{}, fmt.Errorf("%w: vector field %q: text after the spec", ErrInvalid, name)
	}
	if s.Dim == nil {
		return VectorField{}, fmt.Errorf("%w: vector field %q: \"dim\" is required", ErrInvalid, name)
	}
	f := VectorField{Name: name, Dim: *s.Dim, Metric: metric.Cosine, M: s.M, EfConstruction: s.EfConstruction}
	if s.Metric != nil {
		m, err := metric.Parse(*s.Metric)
		if err != nil {
			return VectorField{}, fmt.Errorf("%w: vector field %q: %v", ErrInvalid, name, err)
		}
		f.Metric = m
	}
	if s.Quantization != nil {
		q, err := parseQuantization(*s.Quantization)
		if err != nil {
			return VectorField{}, fmt.Errorf("vector field %q: %w", name, err)
		}
		f.Quantization = q
	}
	if s.Multivector != nil {
		mv, err := ParseComparator(*s.Multivector)
		if err != nil {
			return VectorField{}, fmt.Errorf("vector field %q: %w", name, err)
		}
		f.Multivector = mv
	}
	if s.Memory != nil {
		mem, err := ParseMemory(*s.Memory)
		if err != nil {
			return VectorField{}, fmt.Errorf("vector field %q: %w", name, err)
		}
		f.Memory = mem
	}
	if s.Rescore != nil {
		if f.Quantization != hnsw.QuantSQ8 {
			return VectorField{}, fmt.Errorf("%w: vector field %q: \"rescore\" needs quantization \"sq8\" (a float field is searched on its floats)", ErrInvalid, name)
		}
		f.CodesOnly = !*s.Rescore
	}
	return f.withDefaults()
}

// ParseVectorFields reads a schema: a JSON object of field name to spec.
// An empty object is a schema without vector fields. A name given twice
// is refused (encoding/json would keep the last).
func ParseVectorFields(raw []byte) ([]VectorField, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: vectors must be a JSON object of field name to spec", ErrInvalid)
	}
	fields := []VectorField{}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: vectors: %v", ErrInvalid, err)
		}
		name := tok.(string) // object keys are strings
		if seen[name] {
			return nil, fmt.Errorf("%w: vector field %q given twice", ErrInvalid, name)
		}
		seen[name] = true
		var spec json.RawMessage
		if err := dec.Decode(&spec); err != nil {
			return nil, fmt.Errorf("%w: vector field %q: %v", ErrInvalid, name, err)
		}
		f, err := ParseVectorField(name, spec)
		if err != nil {
			return nil, err
		}
		fields = append(fields, f)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%w: vectors: %v", ErrInvalid, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: vectors: text after the object", ErrInvalid)
	}
	return fields, nil
}

// ParseSparseFields reads a schema's sparse fields: a JSON array of names
// or an object of name to {"modifier"} (above); null is none. A name
// given twice is refused. Each field is checked as Options.Sparse would
// be (a name, a known modifier); errors wrap ErrInvalid and name the field.
func ParseSparseFields(raw []byte) ([]SparseField, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, nil
	}
	var fields []SparseField
	switch trimmed[0] {
	case '[':
		var names []string
		if err := decodeOne(trimmed, &names); err != nil {
			return nil, fmt.Errorf("%w: sparse_vectors: a list of field names: %v", ErrInvalid, err)
		}
		for _, name := range names {
			fields = append(fields, SparseField{Name: name})
		}
	case '{':
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.Token() // the '{' just seen
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("%w: sparse_vectors: %v", ErrInvalid, err)
			}
			name := tok.(string) // object keys are strings
			var spec json.RawMessage
			if err := dec.Decode(&spec); err != nil {
				return nil, fmt.Errorf("%w: sparse field %q: %v", ErrInvalid, name, err)
			}
			var s struct {
				Modifier *string `json:"modifier"`
			}
			if err := decodeOne(spec, &s); err != nil {
				return nil, fmt.Errorf("%w: sparse field %q: a spec {\"modifier\": \"none\" | \"idf\"}: %v", ErrInvalid, name, err)
			}
			f := SparseField{Name: name}
			if s.Modifier != nil {
				m, err := sparse.ParseModifier(*s.Modifier)
				if err != nil {
					return nil, fmt.Errorf("%w: sparse field %q: %v", ErrInvalid, name, err)
				}
				f.Modifier = m
			}
			fields = append(fields, f)
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("%w: sparse_vectors: %v", ErrInvalid, err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: sparse_vectors: text after the object", ErrInvalid)
		}
	default:
		return nil, fmt.Errorf("%w: sparse_vectors must be a list of names or an object of name to {\"modifier\"}", ErrInvalid)
	}
	if err := limits.CheckVectorFields(len(fields)); err != nil {
		return nil, fmt.Errorf("%w: sparse_vectors: %w", ErrInvalid, err)
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Name] {
			return nil, fmt.Errorf("%w: sparse field %q given twice", ErrInvalid, f.Name)
		}
		seen[f.Name] = true
		if err := f.check(); err != nil {
			return nil, err
		}
	}
	return fields, nil
}

// decodeOne decodes exactly one JSON value into v, refusing unknown keys.
func decodeOne(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("text after the JSON value")
	}
	return nil
}
