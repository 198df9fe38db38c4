package server

import (
	"encoding/json"
	"net/http"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/hnsw"
)

// Named vector fields on the native REST API (package doc, "Vector
// fields"). Values cross as JSON per point: for each field, a list of n
// values, each a vector (a dense field), a list of vectors (a multivector
// field) or null (the point lacks the field). The engine checks them
// against the schema.

// namedVectors reads {"field": [value or null, ...], ...} for n points.
func namedVectors(c *collection.Collection, raw json.RawMessage, n int) (map[string]collection.FieldValues, error) {
	var byName map[string]json.RawMessage
	if err := json.Unmarshal(raw, &byName); err != nil {
		return nil, invalidf("vectors: %v", err)
	}
	multi := map[string]bool{}
	for _, f := range c.VectorFields() {
		multi[f.Name] = f.Multivector != collection.SingleVector
	}
	out := make(map[string]collection.FieldValues, len(byName))
	for name, list := range byName {
		if isSparse(c, name) {
			fv, err := sparseValues(name, list, n)
			if err != nil {
				return nil, err
			}
			out[name] = fv
			continue
		}
		var fv collection.FieldValues
		fv.Points = []int{}
		if multi[name] {
			var values [][][]float32
			if err := json.Unmarshal(list, &values); err != nil {
				return nil, invalidf("vectors[%q]: a list of one list of vectors (or null) per id: %v", name, err)
			}
			if len(values) != n {
				return nil, invalidf("vectors[%q]: %d values for %d ids", name, len(values), n)
			}
			fv.Counts = []int{}
			for i, v := range values {
				if v == nil {
					continue
				}
				fv.Points, fv.Counts = append(fv.Points, i), append(fv.Counts, len(v))
				for _, row := range v {
					fv.Vectors = append(fv.Vectors, row...)
				}
			}
		} else {
			var values [][]float32
			if err := json.Unmarshal(list, &values); err != nil {
				return nil, invalidf("vectors[%q]: a list of one vector (or null) per id: %v", name, err)
			}
			if len(values) != n {
				return nil, invalidf("vectors[%q]: %d values for %d ids", name, len(values), n)
			}
			for i, v := range values {
				if v != nil {
					fv.Points = append(fv.Points, i)
					fv.Vectors = append(fv.Vectors, v...)
				}
			}
		}
		out[name] = fv
	}
	return out, nil
}

// upsertPoints is the upsert of a body whose "vectors" is an object.
func (s *Server) upsertPoints(w http.ResponseWriter, c *collection.Collection, req *upsertRequest) error {
	ids, err := parseIDs(nil, req.IDs, "ids")
	if err != nil {
		return err
	}
	values, err := namedVectors(c, req.Vectors, len(ids))
	if err != nil {
		return err
	}
	docs, err := parseDocs(req.Metadata, len(ids))
	if err != nil {
		return err
	}
	expiry, err := req.expiry()
	if err != nil {
		return err
	}
	if err := c.UpsertPointsExpiring(ids, values, docs, expiry); err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, map[string]int{"upserted": len(ids)})
}

// updateVectors answers POST /collections/{name}/update_vectors:
// {"ids", "vectors": {field: values}} replaces those fields of existing
// points (collection.UpdateVectors).
func (s *Server) updateVectors(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		IDs     json.RawMessage `json:"ids"`
		Vectors json.RawMessage `json:"vectors"`
	}
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	if rawJSON(req.IDs) == nil || rawJSON(req.Vectors) == nil {
		return badRequestf("update_vectors needs \"ids\" and \"vectors\"")
	}
	ids, err := parseIDs(nil, req.IDs, "ids")
	if err != nil {
		return err
	}
	values, err := namedVectors(c, req.Vectors, len(ids))
	if err != nil {
		return err
	}
	n, err := c.UpdateVectors(ids, values)
	if err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, map[string]int{"updated": n})
}

// deleteVectors answers POST /collections/{name}/delete_vectors:
// {"ids", "vectors": [field names]} (collection.DeleteVectors).
func (s *Server) deleteVectors(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		IDs     json.RawMessage `json:"ids"`
		Vectors []string        `json:"vectors"`
	}
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	if rawJSON(req.IDs) == nil || req.Vectors == nil {
		return badRequestf("delete_vectors needs \"ids\" and \"vectors\" (field names)")
	}
	ids, err := parseIDs(nil, req.IDs, "ids")
	if err != nil {
		return err
	}
	n, err := c.DeleteVectors(ids, req.Vectors)
	if err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, map[string]int{"updated": n})
}

// addVectorField answers POST /collections/{name}/add_vector_field:
// {"name", "spec": {"dim", ...}} (collection.ParseVectorField's spec).
func (s *Server) addVectorField(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Name *string         `json:"name"`
		Spec json.RawMessage `json:"spec"`
	}
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	if req.Name == nil || rawJSON(req.Spec) == nil {
		return badRequestf("add_vector_field needs \"name\" and \"spec\"")
	}
	f, err := collection.ParseVectorField(*req.Name, req.Spec)
	if err != nil {
		return err
	}
	if err := c.AddVectorField(f); err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, map[string]string{"added": f.Name})
}

// removeVectorField answers POST /collections/{name}/remove_vector_field:
// {"name"}.
func (s *Server) removeVectorField(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Name *string `json:"name"`
	}
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	if req.Name == nil {
		return badRequestf("remove_vector_field needs \"name\"")
	}
	if err := c.RemoveVectorField(*req.Name); err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, map[string]string{"removed": *req.Name})
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

// queryField answers a query with "using": the dense or multivector field
// it names. A multivector field's "vector" is one query (a list of
// vectors), "vectors" a batch of them.
func (s *Server) queryField(w http.ResponseWriter, c *collection.Collection, req *queryRequest, sc *queryScratch) error {
	batch := rawJSON(req.Vectors) != nil
	if batch == (rawJSON(req.Vector) != nil) {
		return badRequestf("query needs exactly one of \"vector\" (one query) and \"vectors\" (a batch)")
	}
	raw := req.Vector
	if batch {
		raw = req.Vectors
	}
	field, ok := fieldOf(c, *req.Using)
	if !ok {
		return invalidf("no vector field %q", *req.Using)
	}
	var queries [][][]float32 // each query's rows
	if field.Multivector != collection.SingleVector {
		if batch {
			if err := json.Unmarshal(raw, &queries); err != nil {
				return invalidf("vectors: a list of queries, each a list of vectors: %v", err)
			}
		} else {
			var one [][]float32
			if err := json.Unmarshal(raw, &one); err != nil {
				return invalidf("vector: a multivector query is a list of vectors: %v", err)
			}
			queries = [][][]float32{one}
		}
	} else {
		var rows [][]float32
		if batch {
			if err := json.Unmarshal(raw, &rows); err != nil {
				return invalidf("vectors: a list of vectors: %v", err)
			}
		} else {
			var one []float32
			if err := json.Unmarshal(raw, &one); err != nil {
				return invalidf("vector: %v", err)
			}
			rows = [][]float32{one}
		}
		queries = [][][]float32{rows}
	}
	nq := len(queries)
	if field.Multivector == collection.SingleVector {
		nq = len(queries[0])
	}
	k, ef, in, f, err := s.queryOptions(c, req, nq)
	if err != nil {
		return err
	}
	ids, dists := make([]collection.ID, nq*k), make([]float32, nq*k)
	var stats hnsw.SearchStats
	if field.Multivector == collection.SingleVector {
		flat := make([]float32, 0, nq*field.Dim)
		for i, row := range queries[0] {
			if len(row) != field.Dim {
				return invalidf("vectors[%d] holds %d numbers, the field %q has dimension %d", i, len(row), field.Name, field.Dim)
			}
			flat = append(flat, row...)
		}
		st, err := c.QueryField(field.Name, flat, k, ef, f, nil, 0, ids, dists)
		if err != nil {
			return err
		}
		stats = st
	} else {
		for q, rows := range queries {
			var flat []float32
			for _, row := range rows {
				if len(row) != field.Dim {
					return invalidf("query %d: a vector holds %d numbers, the field %q has dimension %d", q, len(row), field.Name, field.Dim)
				}
				flat = append(flat, row...)
			}
			st, err := c.QueryMulti(field.Name, flat, k, ef, f, nil, 1, ids[q*k:(q+1)*k], dists[q*k:(q+1)*k])
			if err != nil {
				return err
			}
			st.DistanceComputations += stats.DistanceComputations
			stats = st
		}
	}
	a := answer{w: w}
	in.vectors = false // a hit's "vector" is the field ""'s: ask get for named ones
	out, err := appendResults(sc.out[:0], a.spill, c, ids, dists, nq, k, in, batch, stats)
	if err == nil {
		a.finish(out)
	}
	return err
}

// appendNamed writes ,"vectors":{field: value, ...} for the point id: the
// fields of names it has (a dense field's vector, a multivector field's
// list of vectors).
func appendNamed(b []byte, c *collection.Collection, id collection.ID, names []string) ([]byte, error) {
	b = append(b, `,"vectors":{`...)
	first := true
	for _, name := range names {
		if isSparse(c, name) {
			found, vecs, err := c.GetSparseVectors([]collection.ID{id}, name)
			if err != nil {
				return nil, err
			}
			if len(found) == 0 {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			key, _ := json.Marshal(name)
			b = appendSparse(append(append(b, key...), ':'), vecs[0])
			continue
		}
		field, _ := fieldOf(c, name)
		found, vecs, counts, err := c.GetVectors([]collection.ID{id}, name)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		key, _ := json.Marshal(name)
		b = append(append(b, key...), ':')
		if counts == nil {
			b = appendFloats(b, vecs)
			continue
		}
		b = append(b, '[')
		for i := range counts[0] {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendFloats(b, vecs[i*field.Dim:(i+1)*field.Dim])
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}
