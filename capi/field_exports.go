package main

// #include "strata.h"
import "C"

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime/cgo"
	"unsafe"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/limits"
)

// The exports of named vector fields (strata.h, "Vector fields"). The
// engine checks the values against the schema; these check only what
// building Go slices over C memory needs.

// schemaJSON is the document strata_col_create_schema takes.
type schemaJSON struct {
	Vectors       json.RawMessage `json:"vectors"`
	SparseVectors json.RawMessage `json:"sparse_vectors"`
	Fsync         *string         `json:"fsync"`
	Seed          uint64          `json:"seed"`
}

// parseSchema reads a create's schema into collection options.
func parseSchema(raw []byte) (collection.Options, error) {
	var s schemaJSON
	if err := decodeStrict(raw, &s); err != nil {
		return collection.Options{}, invalidf("schema: %v", err)
	}
	if s.Vectors == nil {
		return collection.Options{}, invalidf("schema: \"vectors\" is required")
	}
	fields, err := collection.ParseVectorFields(s.Vectors)
	if err != nil {
		return collection.Options{}, err
	}
	sparseFields, err := collection.ParseSparseFields(s.SparseVectors)
	if err != nil {
		return collection.Options{}, err
	}
	opts := collection.Options{Vectors: fields, Sparse: sparseFields, Seed: s.Seed}
	if s.Fsync != nil {
		if opts.Fsync, err = collection.ParseFsync(*s.Fsync); err != nil {
			return collection.Options{}, err
		}
	}
	return opts, nil
}

// decodeStrict decodes one JSON value into v, refusing unknown keys.
func decodeStrict(raw []byte, v any) error {
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

//export strata_col_create_schema
func strata_col_create_schema(path *C.char, schema *C.char, schemaLen C.size_t, out *C.strata_handle,
	errBuf *C.char, errLen C.size_t) C.int {
	return call("strata_col_create_schema", errBuf, errLen, func() error {
		if out == nil {
			return invalidf("output handle pointer is NULL")
		}
		dir, err := goString(path, "path")
		if err != nil {
			return err
		}
		raw, err := bytesArg(schema, schemaLen, "schema")
		if err != nil {
			return err
		}
		opts, err := parseSchema(raw)
		if err != nil {
			return err
		}
		c, err := collection.Create(dir, opts, collection.Tuning{})
		if err != nil {
			return err
		}
		*out = C.strata_handle(cgo.NewHandle(c))
		return nil
	})
}

// nameArg copies a field name of n bytes (NULL with 0 is "").
func nameArg(p *C.char, n C.size_t, what string) (string, error) {
	if n > limits.MaxFieldName {
		return "", invalidf("%s is %d bytes, more than %d", what, n, limits.MaxFieldName)
	}
	raw, err := bytesArg(p, n, what)
	return string(raw), err
}

// fieldValuesArg reads nfields descriptors of values for a call of n ids,
// viewing the caller's arrays for the duration of the call.
func fieldValuesArg(p *C.strata_field_values, nfields int64, n int) (map[string]collection.FieldValues, error) {
	if nfields < 0 || nfields > limits.MaxVectorFields {
		return nil, invalidf("nfields must be in [0, %d], got %d", limits.MaxVectorFields, nfields)
	}
	if nfields > 0 && p == nil {
		return nil, invalidf("fields pointer is NULL")
	}
	out := make(map[string]collection.FieldValues, nfields)
	for _, d := range view[C.strata_field_values](p, int(nfields)) {
		name, fv, err := oneFieldArg(&d, n)
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, invalidf("vector field %q given twice", name)
		}
		out[name] = fv
	}
	return out, nil
}

// oneFieldArg reads one descriptor; n is the call's number of points.
func oneFieldArg(d *C.strata_field_values, n int) (string, collection.FieldValues, error) {
	name, err := nameArg(d.name, d.name_len, "field name")
	if err != nil {
		return "", collection.FieldValues{}, err
	}
	var fv collection.FieldValues
	rows := int64(d.n_points)
	switch {
	case rows == -1:
		rows = int64(n)
	case rows < 0 || rows > int64(n):
		return "", fv, invalidf("vector field %q: n_points must be -1 or in [0, %d], got %d", name, n, rows)
	default:
		if rows > 0 && d.points == nil {
			return "", fv, invalidf("vector field %q: points pointer is NULL", name)
		}
		fv.Points = make([]int, rows)
		for i, p := range view[int64](d.points, int(rows)) {
			fv.Points[i] = int(p)
		}
	}
	if d.counts != nil {
		fv.Counts = make([]int, rows)
		for i, c := range view[int64](d.counts, int(rows)) {
			fv.Counts[i] = int(c)
		}
	}
	if d.n_values < 0 || d.n_values > maxFloats {
		return "", fv, invalidf("vector field %q: n_values must be in [0, 2^42], got %d", name, d.n_values)
	}
	if d.n_values > 0 && d.values == nil {
		return "", fv, invalidf("vector field %q: values pointer is NULL", name)
	}
	fv.Vectors = view[float32](d.values, int(d.n_values))
	// A sparse field's indices pair with its values, one each; the
	// engine refuses indices for a dense field and their lack for a
	// sparse one, naming the field.
	fv.Indices = view[uint32](d.indices, int(d.n_values))
	return name, fv, nil
}

//export strata_col_upsert_points
func strata_col_upsert_points(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings,
	fields *C.strata_field_values, nfields C.int64_t, metaJSON *C.char, metaLen C.size_t, errBuf *C.char, errLen C.size_t) C.int {
	return upsertPoints("strata_col_upsert_points", h, ids, n, strs, fields, nfields, metaJSON, metaLen, nil, nil, 0, errBuf, errLen)
}

//export strata_col_update_vectors
func strata_col_update_vectors(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings,
	fields *C.strata_field_values, nfields C.int64_t, outCount *C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_update_vectors", h, errBuf, errLen, func(c *collection.Collection) error {
		idv, err := idsArg(ids, int64(n), strs, "ids")
		if err != nil {
			return err
		}
		values, err := fieldValuesArg(fields, int64(nfields), len(idv))
		if err != nil {
			return err
		}
		count, err := c.UpdateVectors(idv, values)
		if err == nil && outCount != nil {
			*outCount = C.int64_t(count)
		}
		return err
	})
}

//export strata_col_delete_vectors
func strata_col_delete_vectors(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings,
	names *C.char, namesLen C.size_t, outCount *C.int64_t, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_delete_vectors", h, errBuf, errLen, func(c *collection.Collection) error {
		idv, err := idsArg(ids, int64(n), strs, "ids")
		if err != nil {
			return err
		}
		raw, err := bytesArg(names, namesLen, "names")
		if err != nil {
			return err
		}
		var list []string
		if err := decodeStrict(raw, &list); err != nil {
			return invalidf("names must be a JSON array of field names: %v", err)
		}
		count, err := c.DeleteVectors(idv, list)
		if err == nil && outCount != nil {
			*outCount = C.int64_t(count)
		}
		return err
	})
}

//export strata_col_add_vector_field
func strata_col_add_vector_field(h C.strata_handle, name *C.char, nameLen C.size_t, spec *C.char, specLen C.size_t,
	errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_add_vector_field", h, errBuf, errLen, func(c *collection.Collection) error {
		field, err := nameArg(name, nameLen, "field name")
		if err != nil {
			return err
		}
		raw, err := bytesArg(spec, specLen, "spec")
		if err != nil {
			return err
		}
		f, err := collection.ParseVectorField(field, raw)
		if err != nil {
			return err
		}
		return c.AddVectorField(f)
	})
}

//export strata_col_remove_vector_field
func strata_col_remove_vector_field(h C.strata_handle, name *C.char, nameLen C.size_t, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_remove_vector_field", h, errBuf, errLen, func(c *collection.Collection) error {
		field, err := nameArg(name, nameLen, "field name")
		if err != nil {
			return err
		}
		return c.RemoveVectorField(field)
	})
}

// fieldOf returns the schema's field of that name.
func fieldOf(c *collection.Collection, name string) (collection.VectorField, bool) {
	for _, f := range c.VectorFields() {
		if f.Name == name {
			return f, true
		}
	}
	return collection.VectorField{}, false
}

//export strata_col_query_field
func strata_col_query_field(h C.strata_handle, query *C.strata_field_values, k C.int64_t, ef C.int64_t, numThreads C.int,
	where *C.char, whereLen C.size_t, outIDs *C.int64_t, outIDJSON *C.strata_buffer, outDists *C.float, outMeta *C.strata_buffer,
	stats *C.strata_search_stats, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_query_field", h, errBuf, errLen, func(c *collection.Collection) error {
		if query == nil {
			return invalidf("query pointer is NULL")
		}
		if query.points != nil {
			return invalidf("a query's points must be NULL (n_points is the number of queries)")
		}
		nq := int64(query.n_points)
		if nq < 0 {
			return invalidf("a query's n_points (the number of queries) must be >= 0, got %d", nq)
		}
		d := *query
		d.n_points = -1 // every one of the nq queries has a value
		name, fv, err := oneFieldArg(&d, int(nq))
		if err != nil {
			return err
		}
		ids, err := queryOutputs(C.int64_t(nq), k, outIDs, outDists)
		if err != nil {
			return err
		}
		f, err := filterArg(where, whereLen)
		if err != nil {
			return err
		}
		dists := view[float32](outDists, len(ids))
		field, ok := fieldOf(c, name)
		var st hnsw.SearchStats
		switch {
		case ok && field.Multivector != collection.SingleVector:
			if fv.Counts == nil {
				return invalidf("multivector field %q: a query needs counts (the rows of each query)", name)
			}
			at := 0
			for q, rows := range fv.Counts {
				if rows < 1 || rows > limits.MaxMultivectors || at+rows*field.Dim > len(fv.Vectors) {
					return invalidf("multivector field %q: query %d: %d rows of dim %d do not fit the %d floats given",
						name, q, rows, field.Dim, len(fv.Vectors))
				}
				end := at + rows*field.Dim
				s, err := c.QueryMulti(name, fv.Vectors[at:end], int(k), int(ef), f, nil, int(numThreads),
					ids[q*int(k):(q+1)*int(k)], dists[q*int(k):(q+1)*int(k)])
				if err != nil {
					return err
				}
				st = sumStats(st, s)
				at = end
			}
			if at != len(fv.Vectors) {
				return invalidf("multivector field %q: %d floats given, the counts take %d", name, len(fv.Vectors), at)
			}
		default:
			if fv.Counts != nil {
				return invalidf("vector field %q is not a multivector field: counts given", name)
			}
			if ok && int64(len(fv.Vectors)) != nq*int64(field.Dim) {
				return invalidf("vector field %q: %d floats for %d queries of dimension %d", name, len(fv.Vectors), nq, field.Dim)
			}
			s, err := c.QueryField(name, fv.Vectors, int(k), int(ef), f, nil, int(numThreads), ids, dists)
			if err != nil {
				return err
			}
			st = sumStats(st, s)
		}
		writeStats(stats, st)
		return writeAnswer(c, ids, outIDs, outIDJSON, outMeta)
	})
}

// sumStats adds the stats of one more query of a call: distances summed,
// the rest the last query's (the same filter gives the same plan).
func sumStats(sum, s hnsw.SearchStats) hnsw.SearchStats {
	s.DistanceComputations += sum.DistanceComputations
	return s
}

//export strata_col_get_vectors
func strata_col_get_vectors(h C.strata_handle, ids *C.uint64_t, n C.int64_t, strs *C.strata_id_strings, name *C.char, nameLen C.size_t,
	outCounts *C.int64_t, outVectors *C.strata_buffer, errBuf *C.char, errLen C.size_t) C.int {
	return withCollection("strata_col_get_vectors", h, errBuf, errLen, func(c *collection.Collection) error {
		idv, err := idsArg(ids, int64(n), strs, "ids")
		if err != nil {
			return err
		}
		field, err := nameArg(name, nameLen, "field name")
		if err != nil {
			return err
		}
		if outVectors == nil || (len(idv) > 0 && outCounts == nil) {
			return invalidf("output pointer is NULL")
		}
		found, vecs, counts, err := c.GetVectors(idv, field)
		if err != nil {
			return err
		}
		// found is the ids that have a value, in request order: a
		// subsequence of idv, matched in one walk.
		out := view[int64](outCounts, len(idv))
		j := 0
		for i, id := range idv {
			out[i] = 0
			if j < len(found) && found[j] == id {
				out[i] = 1
				if counts != nil {
					out[i] = int64(counts[j])
				}
				j++
			}
		}
		setBuffer(outVectors, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vecs))), len(vecs)*4))
		return nil
	})
}
