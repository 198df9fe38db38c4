package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/sparse"
	"github.com/strata-db/strata/go/collection/text"
)

// Sparse vector fields and fused search on the native REST API (package
// doc, "Sparse fields and fused search"). A sparse value crosses as
// {"indices": [u32...], "values": [f32...]}; the engine checks the
// numbers (lengths, duplicates, finiteness, limits).

// sparseJSON is one sparse vector on the wire.
type sparseJSON struct {
	Indices []uint32  `json:"indices"`
	Values  []float32 `json:"values"`
}

// parseSparse reads one sparse vector.
func parseSparse(raw json.RawMessage, what string) (indices []uint32, values []float32, err error) {
	var v sparseJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return nil, nil, invalidf("%s: a sparse vector {\"indices\": [...], \"values\": [...]}: %v", what, err)
	}
	if v.Indices == nil || v.Values == nil {
		return nil, nil, invalidf("%s: a sparse vector needs \"indices\" and \"values\"", what)
	}
	return v.Indices, v.Values, nil
}

// sparseValues reads a sparse field's values for n points: a list of n
// sparse vectors or nulls.
func sparseValues(name string, list json.RawMessage, n int) (collection.FieldValues, error) {
	var values []json.RawMessage
	if err := json.Unmarshal(list, &values); err != nil {
		return collection.FieldValues{}, invalidf("vectors[%q]: a list of one sparse vector (or null) per id: %v", name, err)
	}
	if len(values) != n {
		return collection.FieldValues{}, invalidf("vectors[%q]: %d values for %d ids", name, len(values), n)
	}
	fv := collection.FieldValues{Points: []int{}, Counts: []int{}, Indices: []uint32{}, Vectors: []float32{}}
	for i, v := range values {
		if rawJSON(v) == nil {
			continue
		}
		idx, val, err := parseSparse(v, "vectors["+strconv.Quote(name)+"]["+strconv.Itoa(i)+"]")
		if err != nil {
			return collection.FieldValues{}, err
		}
		if len(idx) != len(val) {
			return collection.FieldValues{}, invalidf("vectors[%q][%d]: %d indices and %d values", name, i, len(idx), len(val))
		}
		fv.Points, fv.Counts = append(fv.Points, i), append(fv.Counts, len(idx))
		fv.Indices, fv.Vectors = append(fv.Indices, idx...), append(fv.Vectors, val...)
	}
	return fv, nil
}

// isSparse reports whether name is one of c's sparse fields.
func isSparse(c *collection.Collection, name string) bool {
	for _, f := range c.SparseFields() {
		if f.Name == name {
			return true
		}
	}
	return false
}

// appendSparse writes {"indices": [...], "values": [...]}.
func appendSparse(b []byte, v sparse.Vector) []byte {
	b = append(b, `{"indices":[`...)
	for i, x := range v.Indices {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(x), 10)
	}
	b = append(b, `],"values":`...)
	b = appendFloats(b, v.Values)
	return append(b, '}')
}

// addSparseField answers POST /collections/{name}/add_sparse_field:
// {"name", "modifier": "none" | "idf"} (collection.AddSparseField).
func (s *Server) addSparseField(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Name     *string `json:"name"`
		Modifier string  `json:"modifier"`
	}
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	if req.Name == nil {
		return badRequestf("add_sparse_field needs \"name\"")
	}
	m, err := sparse.ParseModifier(req.Modifier)
	if err != nil {
		return invalidf("sparse field %q: %v", *req.Name, err)
	}
	if err := c.AddSparseField(collection.SparseField{Name: *req.Name, Modifier: m}); err != nil {
		return err
	}
	return writeValue(w, http.StatusOK, map[string]string{"added": *req.Name})
}

// querySparse answers a query with "using" a sparse field and "sparse"
// its query vector: {"results": [{"id", "score", "metadata"}, ...]}.
func (s *Server) querySparse(w http.ResponseWriter, c *collection.Collection, req *queryRequest) error {
	if rawJSON(req.Vector) != nil || rawJSON(req.Vectors) != nil {
		return badRequestf("a sparse query takes \"sparse\", not \"vector\" or \"vectors\"")
	}
	if req.Using == nil {
		return badRequestf("a sparse query needs \"using\" (the sparse field)")
	}
	idx, val, err := parseSparse(req.Sparse, "sparse")
	if err != nil {
		return err
	}
	k, _, in, f, err := s.queryOptions(c, req, 1)
	if err != nil {
		return err
	}
	hits, err := c.QuerySparse(*req.Using, idx, val, k, f, nil)
	if err != nil {
		return err
	}
	return writeScoredResults(w, c, hits, in)
}

// writeScoredResults writes {"results": [{"id", "score", "metadata"}]}.
func writeScoredResults(w http.ResponseWriter, c *collection.Collection, hits []collection.Scored, in include) error {
	var docs [][]byte
	ids := make([]collection.ID, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	if in.metadata {
		var err error
		if docs, err = c.Documents(ids); err != nil {
			return err
		}
	}
	in.distances = false // a scored answer has none
	b := []byte(`{"results":[`)
	for i, h := range hits {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendID(b, h.ID)
		b = append(b, `,"score":`...)
		b = strconv.AppendFloat(b, h.Score, 'g', -1, 64)
		var err error
		if b, err = appendExtras(b, c, in, h.ID, docs, i); err != nil {
			return err
		}
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	a := answer{w: w}
	a.finish(b)
	return nil
}

// subQueryJSON is one sub-query of POST /collections/{name}/search.
type subQueryJSON struct {
	Using     string          `json:"using"`
	Vector    json.RawMessage `json:"vector"`
	Sparse    json.RawMessage `json:"sparse"`
	Text      *string         `json:"text"`
	TextField string          `json:"text_field"`
	Limit     *int            `json:"limit"`
	Ef        int             `json:"ef"`
}

// search answers POST /collections/{name}/search: {"queries": [sub-query,
// ...], "fusion": "rrf" | "dbsf" | null, "rrf_k", "k", "filter",
// "include"} → {"results": [{"id", "score", "metadata"}, ...]}: the
// engine's QueryFused, or with "fusion": null and one sub-query its own
// list (collection.Search).
func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Queries []subQueryJSON  `json:"queries"`
		Fusion  json.RawMessage `json:"fusion"`
		RRFK    float64         `json:"rrf_k"`
		K       *int            `json:"k"`
		Filter  json.RawMessage `json:"filter"`
		Include []string        `json:"include"`
	}
	c, err := s.collectionAndBody(r, &req)
	if err != nil {
		return err
	}
	k := defaultK
	if req.K != nil {
		k = *req.K
	}
	if k < 1 || k > s.limits.MaxK {
		return invalidf("k must be between 1 and %d, got %d (the server's limit: strata-server --max-k)", s.limits.MaxK, k)
	}
	in, err := parseInclude(req.Include, include{metadata: true})
	if err != nil {
		return err
	}
	if in.vectors {
		return badRequestf("a search's hits carry no vector: ask get for them")
	}
	f, err := parseFilter(req.Filter)
	if err != nil {
		return err
	}
	subs := make([]collection.SubQuery, len(req.Queries))
	for i, q := range req.Queries {
		if subs[i], err = subQuery(c, q, i, k); err != nil {
			return err
		}
	}
	var hits []collection.Scored
	if raw := rawJSON(req.Fusion); raw == nil && req.Fusion != nil {
		if len(subs) != 1 {
			return invalidf("\"fusion\": null takes one sub-query (its own list), got %d", len(subs))
		}
		subs[0].Limit = k
		hits, err = c.Search(subs[0], f, nil, 0)
	} else {
		name := "rrf"
		if raw != nil {
			if err := json.Unmarshal(raw, &name); err != nil {
				return invalidf("fusion must be \"rrf\", \"dbsf\" or null, got %s", truncateForMessage(string(raw)))
			}
		}
		method, perr := collection.ParseFusion(name)
		if perr != nil {
			return perr
		}
		hits, err = c.QueryFused(subs, collection.Fusion{Method: method, RRFK: req.RRFK}, k, f, nil, 0)
	}
	if err != nil {
		return err
	}
	return writeScoredResults(w, c, hits, in)
}

// subQuery reads the i-th sub-query of a search of k results.
func subQuery(c *collection.Collection, q subQueryJSON, i, k int) (collection.SubQuery, error) {
	sub := collection.SubQuery{Field: q.Using, Limit: k, Ef: q.Ef}
	if q.Limit != nil {
		sub.Limit = *q.Limit
	}
	kinds := 0
	what := "queries[" + strconv.Itoa(i) + "]"
	if rawJSON(q.Vector) != nil {
		kinds++
		field, ok := fieldOf(c, q.Using)
		if ok && field.Multivector != collection.SingleVector {
			var rows [][]float32
			if err := json.Unmarshal(q.Vector, &rows); err != nil {
				return sub, invalidf("%s.vector: a multivector query is a list of vectors: %v", what, err)
			}
			for _, row := range rows {
				sub.Vector = append(sub.Vector, row...)
			}
		} else if err := json.Unmarshal(q.Vector, &sub.Vector); err != nil {
			return sub, invalidf("%s.vector: %v", what, err)
		}
	}
	if rawJSON(q.Sparse) != nil {
		kinds++
		var err error
		if sub.Indices, sub.Values, err = parseSparse(q.Sparse, what+".sparse"); err != nil {
			return sub, err
		}
	}
	if q.Text != nil {
		kinds++
		if q.Using != "" {
			return sub, invalidf("%s: a text sub-query names its index with \"text_field\", not \"using\"", what)
		}
		sub.Text, sub.Field, sub.BM25 = *q.Text, q.TextField, text.Params{}
		if sub.Text == "" {
			return sub, invalidf("%s: text is empty", what)
		}
	}
	if kinds != 1 {
		return sub, invalidf("%s: give exactly one of \"vector\", \"sparse\" or \"text\"", what)
	}
	return sub, nil
}
