package qdrant

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/metric"
)

// Named vectors: Qdrant's VectorStruct, a point's vectors, is a list of
// numbers (the unnamed vector), a list of lists (an unnamed multivector)
// or an object of names to either, a sparse field's value being
// {"indices": [...], "values": [...]}. This file translates it into the
// engine's columns (collection.FieldValues) and back.

// fieldSchema is a collection's vector fields by name: dense and
// multivector ones, and sparse ones (one name space in the engine).
type fieldSchema struct {
	dense  map[string]collection.VectorField
	sparse map[string]collection.SparseField
}

// schemaOf returns the collection's vector fields by name.
func schemaOf(c *collection.Collection) fieldSchema {
	s := fieldSchema{dense: map[string]collection.VectorField{}, sparse: map[string]collection.SparseField{}}
	for _, f := range c.VectorFields() {
		s.dense[f.Name] = f
	}
	for _, f := range c.SparseFields() {
		s.sparse[f.Name] = f
	}
	return s
}

func (s fieldSchema) has(name string) bool {
	_, dense := s.dense[name]
	_, sparse := s.sparse[name]
	return dense || sparse
}

// pointValue is one field's value of one point: its rows of Dim floats,
// or a sparse field's indices and values.
type pointValue struct {
	rows    []float32
	count   int // vectors (1 for a dense field)
	sparse  bool
	indices []uint32
}

// parsePointVectors reads a point's VectorStruct against the schema.
// Absent or null is no vector at all.
func parsePointVectors(raw json.RawMessage, schema fieldSchema) (map[string]pointValue, error) {
	raw = bytes.TrimSpace(raw)
	out := map[string]pointValue{}
	if !present(raw) {
		return out, nil
	}
	if raw[0] != '{' {
		v, err := parseFieldValue(raw, "", schema)
		if err != nil {
			return nil, err
		}
		out[""] = v
		return out, nil
	}
	var named map[string]json.RawMessage
	if err := json.Unmarshal(raw, &named); err != nil {
		return nil, badRequestf("vector: %v", err)
	}
	for name, value := range named {
		v, err := parseFieldValue(value, name, schema)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// parseFieldValue reads one field's value: a vector, or for a multivector
// field a list of vectors.
func parseFieldValue(raw json.RawMessage, name string, schema fieldSchema) (pointValue, error) {
	raw = bytes.TrimSpace(raw)
	if _, ok := schema.sparse[name]; ok {
		indices, values, err := parseSparseVector(raw, name)
		if err != nil {
			return pointValue{}, err
		}
		return pointValue{sparse: true, indices: indices, rows: values}, nil
	}
	f, ok := schema.dense[name]
	if !ok {
		return pointValue{}, badRequestf("Wrong input: Not existing vector name error: %s", name)
	}
	if len(raw) > 0 && raw[0] == '{' {
		return pointValue{}, badRequestf("vector %q is a dense field: a sparse vector {\"indices\", \"values\"} is for a sparse field", name)
	}
	if f.Multivector == collection.SingleVector {
		v, err := parseVector(raw, f.Dim)
		if err != nil {
			return pointValue{}, err
		}
		return pointValue{rows: v, count: 1}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return pointValue{}, badRequestf("multivector %q must be a non-empty list of vectors", name)
	}
	var rows []float32
	for _, item := range list {
		v, err := parseVector(item, f.Dim)
		if err != nil {
			return pointValue{}, err
		}
		rows = append(rows, v...)
	}
	return pointValue{rows: rows, count: len(list)}, nil
}

// columns turns the points' values into the engine's columns.
func columns(points []map[string]pointValue, schema fieldSchema) map[string]collection.FieldValues {
	out := map[string]collection.FieldValues{}
	for i, p := range points {
		for name, v := range p {
			fv := out[name]
			if fv.Points == nil {
				fv.Points = []int{}
			}
			fv.Points = append(fv.Points, i)
			fv.Vectors = append(fv.Vectors, v.rows...)
			switch {
			case v.sparse:
				if fv.Indices == nil {
					fv.Indices, fv.Counts = []uint32{}, []int{}
				}
				fv.Indices = append(fv.Indices, v.indices...)
				fv.Counts = append(fv.Counts, len(v.indices))
				if fv.Vectors == nil {
					fv.Vectors = []float32{}
				}
			case schema.dense[name].Multivector != collection.SingleVector:
				fv.Counts = append(fv.Counts, v.count)
			}
			out[name] = fv
		}
	}
	return out
}

// parseSparseVector reads Qdrant's SparseVector, {"indices": [u32...],
// "values": [f32...]}; the engine checks the pairs (sparse.Normalize:
// lengths, duplicates, finite values).
func parseSparseVector(raw json.RawMessage, name string) ([]uint32, []float32, error) {
	var sv struct {
		Indices []json.Number `json:"indices"`
		Values  []json.Number `json:"values"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if len(raw) == 0 || raw[0] != '{' || dec.Decode(&sv) != nil || sv.Indices == nil || sv.Values == nil {
		return nil, nil, badRequestf("vector %q is a sparse field: its value is {\"indices\": [...], \"values\": [...]}, got %s", name, truncate(string(raw)))
	}
	if len(sv.Indices) != len(sv.Values) {
		return nil, nil, badRequestf("sparse vector %q: %d indices and %d values", name, len(sv.Indices), len(sv.Values))
	}
	indices := make([]uint32, len(sv.Indices))
	for i, n := range sv.Indices {
		x, err := strconv.ParseUint(n.String(), 10, 32)
		if err != nil {
			return nil, nil, badRequestf("sparse vector %q: indices[%d] = %s is not an integer in [0, 2^32)", name, i, n)
		}
		indices[i] = uint32(x)
	}
	values := make([]float32, len(sv.Values))
	for i, n := range sv.Values {
		x, err := strconv.ParseFloat(n.String(), 32)
		if err != nil {
			return nil, nil, badRequestf("sparse vector %q: values[%d] = %s is not a float32", name, i, n)
		}
		values[i] = float32(x)
	}
	return indices, values, nil
}

// namedVectors returns the vectors of the points in ids (by position) as
// Qdrant shows them: for each point an object of names to a vector (a
// list of vectors for a multivector field), or nil if the collection
// holds the one unnamed dense vector (records shows the plain list then).
func namedVectors(c *collection.Collection, ids []collection.ID) ([]map[string]any, error) {
	fields := c.VectorFields()
	if c.Options().Vectors == nil {
		return nil, nil
	}
	out := make([]map[string]any, len(ids))
	for i := range out {
		out[i] = map[string]any{}
	}
	// An id asked for twice is answered twice: every position gets its
	// vectors (the engine answers each id once).
	at := make(map[collection.ID][]int, len(ids))
	for i, id := range ids {
		at[id] = append(at[id], i)
	}
	set := func(id collection.ID, field string, v any) {
		for _, i := range at[id] {
			out[i][field] = v
		}
	}
	for _, f := range c.SparseFields() {
		found, vectors, err := c.GetSparseVectors(ids, f.Name)
		if err != nil {
			return nil, err
		}
		for j, id := range found {
			set(id, f.Name, map[string]any{"indices": vectors[j].Indices, "values": vectors[j].Values})
		}
	}
	for _, f := range fields {
		found, vectors, counts, err := c.GetVectors(ids, f.Name)
		if err != nil {
			return nil, err
		}
		row := 0
		for j, id := range found {
			n := 1
			if counts != nil {
				n = counts[j]
			}
			rows := vectors[row*f.Dim : (row+n)*f.Dim]
			row += n
			if f.Multivector == collection.SingleVector {
				set(id, f.Name, rows)
				continue
			}
			list := make([][]float32, n)
			for k := range list {
				list[k] = rows[k*f.Dim : (k+1)*f.Dim]
			}
			set(id, f.Name, list)
		}
	}
	return out, nil
}

// multiScore is Qdrant's MAX_SIM score for strata's multivector distance
// (collection's maxsim.go): Σ of the best similarities, nq − dist for
// Cosine and Dot; for Euclid, as qdrant-client's local mode answers, the
// square root of the sum of the squared distances, and for Manhattan the
// sum of the distances (lower is better for both).
func multiScore(d float32, nq int, m metric.Metric) float64 {
	switch m {
	case metric.L2:
		return math.Sqrt(math.Max(float64(d), 0))
	case metric.Manhattan:
		return float64(d)
	}
	return float64(nq) - float64(d)
}

// parseMultiQuery reads a multivector query: a list of vectors.
func parseMultiQuery(raw json.RawMessage, dim int) ([]float32, int, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return nil, 0, badRequestf("a query of a multivector field is a non-empty list of vectors")
	}
	var rows []float32
	for _, item := range list {
		v, err := parseVector(item, dim)
		if err != nil {
			return nil, 0, err
		}
		rows = append(rows, v...)
	}
	return rows, len(list), nil
}

// updateVectors is Qdrant's update_vectors (PUT .../points/vectors): the
// named fields of existing points, their other fields left alone.
// pointVectors is Qdrant's PointVectors.
type pointVectors struct {
	ID     json.RawMessage `json:"id"`
	Vector json.RawMessage `json:"vector"`
}

// updateVectorsRequest is Qdrant's UpdateVectors.
type updateVectorsRequest struct {
	Points       []pointVectors  `json:"points"`
	ShardKey     json.RawMessage `json:"shard_key"`
	UpdateFilter json.RawMessage `json:"update_filter"`
}

func (h *Handler) updateVectors(_ context.Context, name string, req *updateVectorsRequest) (updateResult, error) {
	c, err := h.named(name)
	if err != nil {
		return updateResult{}, err
	}
	schema := schemaOf(c)
	ids := make([]collection.ID, 0, len(req.Points))
	points := make([]map[string]pointValue, 0, len(req.Points))
	at := map[collection.ID]int{}
	for _, p := range req.Points {
		id, err := parseID(p.ID)
		if err != nil {
			return updateResult{}, err
		}
		v, err := parsePointVectors(p.Vector, schema)
		if err != nil {
			return updateResult{}, err
		}
		if i, seen := at[id]; seen { // a later value of the same point wins
			for name, value := range v {
				points[i][name] = value
			}
			continue
		}
		at[id] = len(ids)
		ids, points = append(ids, id), append(points, v)
	}
	if present(req.UpdateFilter) {
		// Existing points it does not match are left alone; missing
		// points are kept, so that the engine answers 404 for them.
		keep, err := writable(c, ids, req.UpdateFilter, nil)
		if err != nil {
			return updateResult{}, err
		}
		n := 0
		for i := range ids {
			if keep[i] {
				ids[n], points[n] = ids[i], points[i]
				n++
			}
		}
		ids, points = ids[:n], points[:n]
		if n == 0 {
			return updated(c), nil
		}
	}
	if _, err := c.UpdateVectors(ids, columns(points, schema)); err != nil {
		return updateResult{}, err
	}
	return updated(c), nil
}

// deleteVectors is Qdrant's delete_vectors (POST .../points/vectors/delete):
// the named fields of the selected points.
// deleteVectorsRequest is Qdrant's DeleteVectors.
type deleteVectorsRequest struct {
	selectorRequest
	Vector []string `json:"vector"`
}

func (h *Handler) deleteVectors(_ context.Context, name string, req *deleteVectorsRequest) (updateResult, error) {
	c, err := h.named(name)
	if err != nil {
		return updateResult{}, err
	}
	if len(req.Vector) == 0 {
		return updateResult{}, badRequestf("vector: name the vectors to delete")
	}
	schema := schemaOf(c)
	for _, name := range req.Vector {
		if !schema.has(name) {
			return updateResult{}, badRequestf("Wrong input: Not existing vector name error: %s", name)
		}
	}
	ids, err := selected(c, &req.selectorRequest)
	if err != nil {
		return updateResult{}, err
	}
	if _, err := c.DeleteVectors(ids, req.Vector); err != nil {
		return updateResult{}, err
	}
	return updated(c), nil
}
