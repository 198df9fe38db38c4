package collection

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/limits"
)

// FieldValues are one vector field's values for a batch of points, in
// columns (so that a door can pass one array per field).
type FieldValues struct {
	// Points lists the positions (into the batch's ids) of the points that
	// have a value, ascending; nil means every point.
	Points []int
	// Vectors holds rows of the field's Dim floats: one per point of
	// Points for a dense field, Counts[i] for the i-th point of Points
	// for a multivector field.
	Vectors []float32
	// Counts, for a multivector field, is the number of vectors of each
	// point of Points, each in [1, limits.MaxMultivectors]; for a sparse
	// field, the number of coordinates of each, in [0,
	// limits.MaxSparseNonZeros].
	Counts []int
	// Indices, for a sparse field only, holds the coordinates' indices,
	// Counts[i] for the i-th point of Points, and Vectors their values.
	// A point's indices may come in any order; an index twice in one
	// point, or a value that is not finite, fails the write. The log and
	// the index hold each vector sorted by index.
	Indices []uint32
}

// UpsertPoints inserts or replaces whole points: ids, their documents
// (nil: every document is {}) and their vectors in any of the schema's
// fields. A point gets exactly the fields given for it: a field it had
// and is not given now is dropped, as a whole-point write (Qdrant's
// upsert) does. Input is validated whole before anything is written; on
// error nothing changed. A collection's fields are those of VectorFields;
// a name that is not one fails with ErrInvalid.
func (c *Collection) UpsertPoints(ids []ID, fields map[string]FieldValues, docs []meta.Document) error {
	return c.UpsertPointsExpiring(ids, fields, docs, Expiry{})
}

// UpsertPointsExpiring is UpsertPoints with a time to live for the points
// written (expiry.go; the zero Expiry: none expires).
func (c *Collection) UpsertPointsExpiring(ids []ID, fields map[string]FieldValues, docs []meta.Document, expiry Expiry) error {
	if err := c.alive(); err != nil {
		return err
	}
	if _, err := checkIDs(ids, true); err != nil {
		return err
	}
	values, err := c.checkFieldValues(len(ids), fields)
	if err != nil {
		return err
	}
	parsed, canonical, err := prepareDocs(docs, len(ids))
	if err != nil {
		return err
	}
	if err := c.checkText(parsed); err != nil {
		return err
	}
	expires, err := c.expiries(len(ids), expiry)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	var rec record
	if len(values) == 1 && values[0].name == "" && !values[0].multi && len(values[0].points) == len(ids) {
		// Every point with the field "" alone is the record of before
		// fields existed, byte for byte.
		rec = record{op: opUpsert, ids: ids, dim: values[0].dim, vectors: values[0].vectors, docs: canonical}
	} else {
		rec = record{op: opUpsertPoints, ids: ids, fields: values, docs: canonical}
	}
	rec.expires = expires
	if err := checkSize(rec); err != nil {
		return err
	}
	_, err = c.submit(rec, parsed)
	return err
}

// UpdateVectors replaces the values of the given fields of existing
// points, leaving their other fields and documents alone (Qdrant's
// update_vectors). An id that does not exist fails the call with
// ErrNotFound before anything is written. It returns how many points it
// updated (fewer if some were deleted meanwhile).
func (c *Collection) UpdateVectors(ids []ID, fields map[string]FieldValues) (int, error) {
	if err := c.alive(); err != nil {
		return 0, err
	}
	if _, err := checkIDs(ids, true); err != nil {
		return 0, err
	}
	values, err := c.checkFieldValues(len(ids), fields)
	if err != nil {
		return 0, err
	}
	if err := c.checkExist(ids); err != nil {
		return 0, err
	}
	if len(ids) == 0 || len(values) == 0 {
		return 0, nil
	}
	rec := record{op: opUpdateVectors, ids: ids, fields: values}
	if err := checkSize(rec); err != nil {
		return 0, err
	}
	return c.submit(rec, nil)
}

// DeleteVectors drops the named fields' values of existing points,
// leaving the points, their documents and other fields (Qdrant's
// delete_vectors). An id that does not exist fails with ErrNotFound, a
// name that is not a field with ErrInvalid, before anything is written.
// It returns how many points it changed.
func (c *Collection) DeleteVectors(ids []ID, names []string) (int, error) {
	if err := c.alive(); err != nil {
		return 0, err
	}
	if _, err := checkIDs(ids, true); err != nil {
		return 0, err
	}
	set := c.fields.Load()
	values := make([]fieldValues, 0, len(names))
	for _, name := range names {
		if !set.has(name) {
			return 0, fmt.Errorf("%w: no vector field %q", ErrInvalid, name)
		}
		if slices.ContainsFunc(values, func(v fieldValues) bool { return v.name == name }) {
			return 0, fmt.Errorf("%w: vector field %q named twice", ErrInvalid, name)
		}
		values = append(values, fieldValues{name: name})
	}
	if err := c.checkExist(ids); err != nil {
		return 0, err
	}
	if len(ids) == 0 || len(values) == 0 {
		return 0, nil
	}
	rec := record{op: opDeleteVectors, ids: ids, fields: values}
	if err := checkSize(rec); err != nil {
		return 0, err
	}
	return c.submit(rec, nil)
}

// AddVectorField adds an empty field to the schema (Qdrant's
// create_vector_name); existing points lack it until they are given a
// value. It fails with ErrExists if the name is taken.
func (c *Collection) AddVectorField(f VectorField) error {
	if err := c.alive(); err != nil {
		return err
	}
	spec, err := f.withDefaults()
	if err != nil {
		return err
	}
	set := c.fields.Load()
	if set.has(spec.Name) {
		return fmt.Errorf("%w: vector field %q", ErrExists, spec.Name)
	}
	if err := limits.CheckVectorFields(set.count() + 1); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	n, err := c.submit(record{op: opAddField, docs: [][]byte{encodeSpec(spec)}}, nil)
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: vector field %q (added meanwhile)", ErrExists, spec.Name)
	}
	return err
}

// AddSparseField adds an empty sparse field to the schema; existing
// points lack it until they are given a value. It fails with ErrExists if
// the name is taken by a field of any kind.
func (c *Collection) AddSparseField(f SparseField) error {
	if err := c.alive(); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	set := c.fields.Load()
	if set.has(f.Name) {
		return fmt.Errorf("%w: vector field %q", ErrExists, f.Name)
	}
	if err := limits.CheckVectorFields(set.count() + 1); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	n, err := c.submit(record{op: opAddField, docs: [][]byte{encodeSparseSpec(f)}}, nil)
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: vector field %q (added meanwhile)", ErrExists, f.Name)
	}
	return err
}

// SparseFields returns the collection's sparse fields, sorted by name.
func (c *Collection) SparseFields() []SparseField { return c.fields.Load().sparseSchema() }

// RemoveVectorField removes a field of any kind (dense, multivector,
// sparse) and its index from the schema (Qdrant's delete_vector_name);
// points keep their other fields. It fails with ErrNotFound if there is
// no such field. Queries of the field that began before it was removed
// finish on its index.
func (c *Collection) RemoveVectorField(name string) error {
	if err := c.alive(); err != nil {
		return err
	}
	if !c.fields.Load().has(name) {
		return fmt.Errorf("%w: vector field %q", ErrNotFound, name)
	}
	doc := encodeFieldName(name)
	n, err := c.submit(record{op: opRemoveField, docs: [][]byte{doc}}, nil)
	if err == nil && n == 0 {
		err = fmt.Errorf("%w: vector field %q (removed meanwhile)", ErrNotFound, name)
	}
	return err
}

// VectorFields returns the collection's vector schema, sorted by name.
func (c *Collection) VectorFields() []VectorField { return c.fields.Load().schema() }

// checkExist fails with ErrNotFound naming the first id without a point.
func (c *Collection) checkExist(ids []ID) error {
	exp := c.expiredNow()
	for i, id := range ids {
		if _, ok := c.liveKeyOf(id, exp); !ok {
			return fmt.Errorf("%w: ids[%d] = %s", ErrNotFound, i, id)
		}
	}
	return nil
}

// checkFieldValues checks the values of a write of n points against the
// schema and returns them as the record holds them, sorted by name.
func (c *Collection) checkFieldValues(n int, fields map[string]FieldValues) ([]fieldValues, error) {
	set := c.fields.Load()
	out := make([]fieldValues, 0, len(fields))
	for name, fv := range fields {
		f := set.get(name)
		if f == nil {
			if set.getSparse(name) == nil {
				return nil, fmt.Errorf("%w: no vector field %q", ErrInvalid, name)
			}
			v, err := checkSparseValues(n, name, fv)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		if fv.Indices != nil {
			return nil, fmt.Errorf("%w: vector field %q is not a sparse field: indices given", ErrInvalid, name)
		}
		v := fieldValues{name: name, multi: f.Multivector != SingleVector, dim: f.Dim}
		points, err := checkPoints(n, name, fv.Points)
		if err != nil {
			return nil, err
		}
		v.points = points
		rows := len(v.points)
		if v.multi {
			if len(fv.Counts) != len(v.points) {
				return nil, fmt.Errorf("%w: multivector field %q: %d counts for %d points", ErrInvalid, name, len(fv.Counts), len(v.points))
			}
			v.counts = make([]uint32, len(fv.Counts))
			rows = 0
			for i, cnt := range fv.Counts {
				if err := limits.CheckMultivectors(cnt); err != nil {
					return nil, fmt.Errorf("%w: multivector field %q, point %d: %w", ErrInvalid, name, i, err)
				}
				v.counts[i] = uint32(cnt)
				rows += cnt
			}
		} else if fv.Counts != nil {
			return nil, fmt.Errorf("%w: vector field %q is not a multivector field: counts given", ErrInvalid, name)
		}
		if len(fv.Vectors) != rows*f.Dim {
			return nil, fmt.Errorf("%w: vector field %q: %d floats for %d vectors of dimension %d",
				ErrInvalid, name, len(fv.Vectors), rows, f.Dim)
		}
		if err := batch.CheckFinite(fv.Vectors, f.Dim, fmt.Sprintf("field %q vectors", name)); err != nil {
			return nil, fmt.Errorf("collection: %w", err)
		}
		v.vectors = fv.Vectors
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b fieldValues) int { return compareNames(a.name, b.name) })
	return out, nil
}

// checkPoints checks a field's positions into a batch of n points (nil:
// all of them).
func checkPoints(n int, name string, points []int) ([]uint32, error) {
	out := make([]uint32, 0, n)
	if points == nil {
		for i := range n {
			out = append(out, uint32(i))
		}
		return out, nil
	}
	for i, p := range points {
		if p < 0 || p >= n || (i > 0 && p <= points[i-1]) {
			return nil, fmt.Errorf("%w: vector field %q: points[%d] = %d: positions must be ascending and in [0, %d)",
				ErrInvalid, name, i, p, n)
		}
		out = append(out, uint32(p))
	}
	return out, nil
}

// checkSparseValues checks a sparse field's values for a batch of n
// points and returns them normalised (sparse.Normalize: each point's
// coordinates sorted by index), as the log holds them.
func checkSparseValues(n int, name string, fv FieldValues) (fieldValues, error) {
	points, err := checkPoints(n, name, fv.Points)
	if err != nil {
		return fieldValues{}, err
	}
	v := fieldValues{name: name, sparse: true, points: points}
	if len(fv.Counts) != len(points) {
		return fieldValues{}, fmt.Errorf("%w: sparse field %q: %d counts for %d points", ErrInvalid, name, len(fv.Counts), len(points))
	}
	total := 0
	for i, cnt := range fv.Counts {
		if err := limits.CheckSparseNonZeros(cnt); err != nil {
			return fieldValues{}, fmt.Errorf("%w: sparse field %q, point %d: %w", ErrInvalid, name, i, err)
		}
		total += cnt
	}
	if len(fv.Indices) != total || len(fv.Vectors) != total {
		return fieldValues{}, fmt.Errorf("%w: sparse field %q: %d indices and %d values for %d coordinates",
			ErrInvalid, name, len(fv.Indices), len(fv.Vectors), total)
	}
	v.counts = make([]uint32, len(points))
	v.indices = make([]uint32, 0, total)
	v.vectors = make([]float32, 0, total)
	from := 0
	for i, cnt := range fv.Counts {
		vec, err := sparse.Normalize(fv.Indices[from:from+cnt], fv.Vectors[from:from+cnt])
		if err != nil {
			return fieldValues{}, fmt.Errorf("%w: sparse field %q, point %d: %v", ErrInvalid, name, i, err)
		}
		v.counts[i] = uint32(cnt)
		v.indices = append(v.indices, vec.Indices...)
		v.vectors = append(v.vectors, vec.Values...)
		from += cnt
	}
	return v, nil
}

// fieldName is the document of a remove-field record (op 9).
type fieldName struct {
	Name string `json:"name"`
}

func encodeFieldName(name string) []byte {
	b, err := json.Marshal(fieldName{Name: name})
	if err != nil {
		panic(fmt.Sprintf("collection: encoding a field name: %v", err)) // a string
	}
	return b
}

func decodeFieldName(b []byte) (string, error) {
	var f fieldName
	if err := json.Unmarshal(b, &f); err != nil {
		return "", fmt.Errorf("%w: remove-field record: %v", ErrCorrupt, err)
	}
	return f.Name, nil
}
