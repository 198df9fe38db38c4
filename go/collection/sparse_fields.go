package collection

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/strata-db/strata/go/collection/snapshot"
	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/vfs"
)

// The sparse vector fields of a collection.
//
// A sparse field holds for some points a sparse vector (indices u32,
// values f32) in an inverted index (package sparse) keyed by the points'
// keys, scored by dot product, optionally with Qdrant's IDF modifier. Its
// name is distinct from every dense field's (one name space, so that
// has_vector and DeleteVectors name one field). It is written with the
// other fields (UpsertPoints, UpdateVectors, DeleteVectors: FieldValues
// with Indices), added with AddSparseField, removed with
// RemoveVectorField, read back with GetSparseVectors and queried with
// QuerySparse.

// SparseField is one sparse vector field of a collection's schema.
type SparseField struct {
	Name     string
	Modifier sparse.Modifier // sparse.ModifierNone or sparse.ModifierIDF
}

func (f SparseField) check() error {
	if err := limits.CheckFieldName(f.Name); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if f.Name == "" {
		// "" is the unnamed dense field of the calls without a field.
		return fmt.Errorf("%w: a sparse field needs a name", ErrInvalid)
	}
	if _, err := sparse.New(f.Modifier); err != nil {
		return fmt.Errorf("%w: sparse field %q: %w", ErrInvalid, f.Name, err)
	}
	return nil
}

// sparseField is a sparse field of the schema with its index.
type sparseField struct {
	SparseField
	index *sparse.Index
}

func newSparseField(spec SparseField) (*sparseField, error) {
	index, err := sparse.New(spec.Modifier)
	if err != nil {
		return nil, fmt.Errorf("%w: sparse field %q: %w", ErrInvalid, spec.Name, err)
	}
	return &sparseField{SparseField: spec, index: index}, nil
}

// points returns the keys of the points with a value in the field,
// ascending (for has_vector).
func (f *sparseField) points() []uint64 {
	keys := f.index.Keys()
	slices.Sort(keys)
	return keys
}

// sparseSchemaOf checks Options.Sparse against itself and the dense
// schema and returns it sorted by name.
func sparseSchemaOf(fields []SparseField, dense []VectorField) ([]SparseField, error) {
	if err := limits.CheckVectorFields(len(fields) + len(dense)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	out := slices.Clone(fields)
	for _, f := range out {
		if err := f.check(); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(dense, func(d VectorField) bool { return d.Name == f.Name }) {
			return nil, fmt.Errorf("%w: %q is both a dense and a sparse vector field", ErrInvalid, f.Name)
		}
	}
	slices.SortFunc(out, func(a, b SparseField) int { return compareNames(a.Name, b.Name) })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("%w: sparse field %q given twice", ErrInvalid, out[i].Name)
		}
	}
	return out, nil
}

// sparseSpec is the JSON of an add-field record (op 8) for a sparse
// field: {"name": ..., "sparse": "none"|"idf"}. A dense field's spec has
// no "sparse" key.
type sparseSpec struct {
	Name   string `json:"name"`
	Sparse string `json:"sparse"`
}

func encodeSparseSpec(f SparseField) []byte {
	b, err := json.Marshal(sparseSpec{Name: f.Name, Sparse: f.Modifier.String()})
	if err != nil {
		panic(fmt.Sprintf("collection: encoding a sparse field spec: %v", err)) // plain strings
	}
	return b
}

// decodeAnySpec reads an add-field record's spec: a sparse field's (sp
// not nil) or a dense or multivector one's.
func decodeAnySpec(b []byte) (dense VectorField, sp *SparseField, err error) {
	var probe struct {
		Sparse *string `json:"sparse"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return VectorField{}, nil, fmt.Errorf("%w: vector field record: %v", ErrCorrupt, err)
	}
	if probe.Sparse == nil {
		dense, err = decodeSpec(b)
		return dense, nil, err
	}
	var s sparseSpec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return VectorField{}, nil, fmt.Errorf("%w: sparse field record: %v", ErrCorrupt, err)
	}
	m, err := sparse.ParseModifier(s.Sparse)
	if err != nil {
		return VectorField{}, nil, fmt.Errorf("%w: sparse field %q: modifier %q", ErrCorrupt, s.Name, s.Sparse)
	}
	f := SparseField{Name: s.Name, Modifier: m}
	if err := f.check(); err != nil {
		return VectorField{}, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return VectorField{}, &f, nil
}

// sparseFileOf names the snapshot file of the i-th sparse field (by
// position: names may hold any character).
func sparseFileOf(i int) string { return fmt.Sprintf("sparse.%02d.idx", i) }

// manifestSparse lists the sparse fields in a format 3 manifest.
func manifestSparse(fields []*sparseField) []snapshot.SparseField {
	if len(fields) == 0 {
		return nil
	}
	out := make([]snapshot.SparseField, len(fields))
	for i, f := range fields {
		out[i] = snapshot.SparseField{Name: f.Name, Modifier: f.Modifier.String(), File: sparseFileOf(i)}
	}
	return out
}

// frozenSparse is a sparse field's state copied for a snapshot.
type frozenSparse struct {
	field  *sparseField
	frozen *sparse.Frozen
}

// saveSparse writes the sparse fields' files into dir and returns their
// names.
func saveSparse(fsys vfs.FS, dir string, frozen []frozenSparse) ([]string, error) {
	names := make([]string, 0, len(frozen))
	for i, fs := range frozen {
		name := sparseFileOf(i)
		if err := fs.frozen.Write(fsys, filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("sparse field %q: %w", fs.field.Name, err)
		}
		names = append(names, name)
	}
	return names, nil
}

// loadSparse reads the sparse fields a manifest lists.
func loadSparse(fsys vfs.FS, snapDir string, m snapshot.Manifest) ([]*sparseField, error) {
	out := make([]*sparseField, 0, len(m.Sparse))
	for _, s := range m.Sparse {
		mod, err := sparse.ParseModifier(s.Modifier)
		if err != nil {
			return nil, fmt.Errorf("%w: sparse field %q: modifier %q", ErrCorrupt, s.Name, s.Modifier)
		}
		index, err := sparse.Read(fsys, filepath.Join(snapDir, s.File))
		if err != nil {
			return nil, fmt.Errorf("sparse field %q: %w", s.Name, err)
		}
		if index.Modifier() != mod {
			return nil, fmt.Errorf("%w: sparse field %q: %s holds modifier %s, the manifest says %s",
				ErrCorrupt, s.Name, s.File, index.Modifier(), mod)
		}
		out = append(out, &sparseField{SparseField: SparseField{Name: s.Name, Modifier: mod}, index: index})
	}
	return out, nil
}

// checkSparsePoints checks that every point of every sparse field has a
// document.
func checkSparsePoints(fields []*sparseField, hasDoc func(uint64) bool, count int) error {
	for _, f := range fields {
		if n := f.index.Len(); n > count {
			return fmt.Errorf("%w: sparse field %q holds %d points, the snapshot %d", ErrCorrupt, f.Name, n, count)
		}
		for _, k := range f.index.Keys() {
			if !hasDoc(k) {
				return fmt.Errorf("%w: sparse field %q holds point %d, which has no document", ErrCorrupt, f.Name, k)
			}
		}
	}
	return nil
}

// putSparse applies v's values (a sparse field's) for the points of keys
// at the positions keep says to (nil: all), in one Upsert so that a query
// sees the record whole.
func putSparse(f *sparseField, v *fieldValues, keys []uint64, keep func(int) bool) error {
	pointKeys := make([]uint64, 0, len(v.points))
	vectors := make([]sparse.Vector, 0, len(v.points))
	from := 0
	for j, p := range v.points {
		if keep == nil || keep(int(p)) {
			pointKeys = append(pointKeys, keys[p])
			vectors = append(vectors, v.sparseVector(j, from))
		}
		from += int(v.counts[j])
	}
	if len(pointKeys) == 0 {
		return nil
	}
	if err := f.index.Upsert(pointKeys, vectors); err != nil {
		return fmt.Errorf("collection: sparse field %q: %w", f.Name, err)
	}
	return nil
}
