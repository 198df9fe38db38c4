package qdrant

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/vfs"
)

// Payload indexes. Meta's index keeps postings for every payload key, so
// a Qdrant payload index has nothing to build: numbers, strings and bools
// are in postings already, a geo condition narrows by the postings of the
// points' lat and lon, a datetime range reads the postings of instants.
// What a created index changes is what get_collection reports: its
// payload_schema lists each declared field with its type and the number
// of points holding a value of that type (counted by a filter when
// asked). The declarations are kept with the collection, in the state
// file <collection dir>/qdrant.payload-schema (package statefile; its
// JSON is {"indexes": {field: {"type": name, "params": field_schema}}}),
// replaced on each change, so they survive a restart, and go with the
// directory when the collection is dropped.

// payloadSchemaFile is the declarations' file in a collection's
// directory. Do not change.
const payloadSchemaFile = "qdrant.payload-schema"

// payloadTypes are Qdrant's payload schema types, each with the meta
// condition that a point holding a value of the type matches.
var payloadTypes = map[string]func(meta.Path) *meta.Filter{
	"keyword":  func(p meta.Path) *meta.Filter { return mustType(p, "string") },
	"text":     func(p meta.Path) *meta.Filter { return mustType(p, "string") },
	"uuid":     func(p meta.Path) *meta.Filter { return mustType(p, "string") },
	"integer":  func(p meta.Path) *meta.Filter { return mustType(p, "int") },
	"float":    func(p meta.Path) *meta.Filter { return mustType(p, "number") },
	"bool":     func(p meta.Path) *meta.Filter { return mustType(p, "bool") },
	"datetime": func(p meta.Path) *meta.Filter { return meta.DatetimeRange(p, meta.TimeBounds{}) },
	"geo": func(p meta.Path) *meta.Filter {
		f, _ := meta.GeoRadius(p, meta.GeoPoint{}, math.Inf(1)) // any geo point
		return f
	},
}

func mustType(p meta.Path, name string) *meta.Filter {
	f, err := meta.OfType(p, name)
	if err != nil {
		panic(err) // the names above are meta's
	}
	return f
}

// payloadIndex is one declared index.
type payloadIndex struct {
	DataType string          `json:"type"`
	Params   json.RawMessage `json:"params,omitempty"` // the field_schema object, if one was sent
}

type payloadSchemaDocument struct {
	Indexes map[string]payloadIndex `json:"indexes"`
}

// payloadIndexes holds the declared indexes of each collection.
type payloadIndexes = collectionStates[payloadSchemaDocument]

func newPayloadIndexes(fsys vfs.FS) *payloadIndexes {
	return &payloadIndexes{file: payloadSchemaFile, what: "payload index declarations", fs: fsys}
}

// indexRequest is Qdrant's CreateFieldIndex.
type indexRequest struct {
	FieldName   string          `json:"field_name"`
	FieldSchema json.RawMessage `json:"field_schema"`
	FieldType   json.RawMessage `json:"field_type"` // the old name of field_schema
}

// parse checks the request: a known type, given as a name or as an
// object with "type" (the parameters of which are kept to be reported).
func (req *indexRequest) parse() (string, payloadIndex, error) {
	if req.FieldName == "" {
		return "", payloadIndex{}, badRequestf("field_name is required")
	}
	if _, err := checkKey(req.FieldName, "field_name"); err != nil {
		return "", payloadIndex{}, err
	}
	raw := req.FieldSchema
	if !present(raw) {
		raw = req.FieldType
	}
	if !present(raw) {
		return "", payloadIndex{}, badRequestf("field_schema is required (keyword, integer, float, bool, geo, datetime, text, uuid)")
	}
	var ix payloadIndex
	if bytes.TrimSpace(raw)[0] == '{' {
		var params struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &params); err != nil {
			return "", payloadIndex{}, badRequestf("field_schema: %v", err)
		}
		ix = payloadIndex{DataType: params.Type, Params: raw}
	} else if err := json.Unmarshal(raw, &ix.DataType); err != nil {
		return "", payloadIndex{}, badRequestf("field_schema: a type name or {\"type\": ...}: %v", err)
	}
	if _, ok := payloadTypes[ix.DataType]; !ok {
		return "", payloadIndex{}, badRequestf("field_schema: unknown payload index type %q (keyword, integer, float, bool, geo, datetime, text, uuid)", ix.DataType)
	}
	return req.FieldName, ix, nil
}

// createIndex is create_payload_index.
func (h *Handler) createIndex(_ context.Context, name string, req *indexRequest) (updateResult, error) {
	c, err := h.named(name)
	if err != nil {
		return updateResult{}, err
	}
	field, ix, err := req.parse()
	if err != nil {
		return updateResult{}, err
	}
	err = h.indexes.change(c, func(d *payloadSchemaDocument) error {
		if d.Indexes == nil {
			d.Indexes = map[string]payloadIndex{}
		}
		d.Indexes[field] = ix
		return nil
	})
	if err != nil {
		return updateResult{}, err
	}
	return updated(c), nil
}

// deleteIndex is delete_payload_index.
func (h *Handler) deleteIndex(_ context.Context, name, field string) (updateResult, error) {
	c, err := h.named(name)
	if err != nil {
		return updateResult{}, err
	}
	err = h.indexes.change(c, func(d *payloadSchemaDocument) error {
		delete(d.Indexes, field)
		return nil
	})
	if err != nil {
		return updateResult{}, err
	}
	return updated(c), nil
}

func (h *Handler) restDeleteIndex(r *http.Request) (any, error) {
	return h.deleteIndex(r.Context(), r.PathValue("name"), r.PathValue("field"))
}

// schemaEntry is one field of payload_schema.
type schemaEntry struct {
	index  payloadIndex
	points int
}

// payloadSchema is get_collection's payload_schema: each declared index
// with its type, parameters and the points holding a value of its type.
func (h *Handler) payloadSchema(c *collection.Collection) (map[string]schemaEntry, error) {
	declared, err := h.indexes.get(c)
	if err != nil {
		return nil, err
	}
	out := map[string]schemaEntry{}
	for field, ix := range declared.Indexes {
		path, err := checkKey(field, "field_name")
		if err != nil {
			return nil, err
		}
		n, err := c.Count(payloadTypes[ix.DataType](path))
		if err != nil {
			return nil, err
		}
		out[field] = schemaEntry{index: ix, points: n}
	}
	return out, nil
}

// facetRequest is Qdrant's FacetRequest.
type facetRequest struct {
	Key      string          `json:"key"`
	Filter   json.RawMessage `json:"filter"`
	Limit    *int            `json:"limit"`
	Exact    *bool           `json:"exact"`
	ShardKey json.RawMessage `json:"shard_key"`
}

type facetHit struct {
	Value any `json:"value"`
	Count int `json:"count"`
}

// facet is facet: the hits.
func (h *Handler) facet(_ context.Context, name string, req *facetRequest) (facetResponse, error) {
	c, err := h.named(name)
	if err != nil {
		return facetResponse{}, err
	}
	hits, err := facet(c, req, h.limits.MaxK)
	return facetResponse{Hits: hits}, err
}

type facetResponse struct {
	Hits []facetHit `json:"hits"`
}

// facetValue is one value a facet counts: Qdrant's FacetValue is a
// string (a UUID in its canonical form), an integer or a bool; the rank
// orders ties between types as local mode does (bool, integer, string).
type facetValue struct {
	rank int
	str  string
	num  float64
	b    bool
}

func (v facetValue) json() any {
	switch v.rank {
	case 0:
		return v.b
	case 1:
		return int64(v.num)
	}
	return v.str
}

func compareFacetValues(a, b facetValue) int {
	if a.rank != b.rank {
		return a.rank - b.rank
	}
	switch a.rank {
	case 0:
		if a.b == b.b {
			return 0
		}
		if !a.b {
			return -1
		}
		return 1
	case 1:
		switch {
		case a.num < b.num:
			return -1
		case a.num > b.num:
			return 1
		}
		return 0
	}
	return strings.Compare(a.str, b.str)
}

// facet counts, over the points matching the filter, the points holding
// each string, integer or bool at the key (a point counts once per
// distinct value), most points first, then by value; exact or not, the
// counts are exact. It reads the matching points' payloads.
func facet(c *collection.Collection, req *facetRequest, maxLimit int) ([]facetHit, error) {
	path, err := checkKey(req.Key, "key")
	if err != nil {
		return nil, err
	}
	limit := 10
	if req.Limit != nil {
		limit = *req.Limit
	}
	if limit < 1 || limit > maxLimit {
		return nil, badRequestf("limit must be in [1, %d], got %d (the server's limit: strata-server --max-k)", maxLimit, limit)
	}
	p, err := compileFilter(req.Filter)
	if err != nil {
		return nil, err
	}
	ids, err := c.ScanIDs(p, collection.ID{}, false, 0)
	if err != nil {
		return nil, err
	}
	docs, err := c.Documents(ids)
	if err != nil {
		return nil, err
	}
	counts := map[facetValue]int{}
	var seen []facetValue
	for _, raw := range docs {
		if raw == nil {
			continue
		}
		doc, err := meta.ReadDocument(raw)
		if err != nil {
			return nil, err
		}
		seen = seen[:0]
		for _, v := range doc.ValuesAt(path) {
			fv, ok := facetValueOf(v)
			if !ok || slices.Contains(seen, fv) {
				continue
			}
			seen = append(seen, fv)
			counts[fv]++
		}
	}
	values := make([]facetValue, 0, len(counts))
	for v := range counts {
		values = append(values, v)
	}
	sort.Slice(values, func(i, j int) bool {
		if ci, cj := counts[values[i]], counts[values[j]]; ci != cj {
			return ci > cj
		}
		return compareFacetValues(values[i], values[j]) < 0
	})
	hits := make([]facetHit, 0, min(limit, len(values)))
	for _, v := range values[:min(limit, len(values))] {
		hits = append(hits, facetHit{Value: v.json(), Count: counts[v]})
	}
	return hits, nil
}

// facetValueOf reads one canonical JSON value as a facet value.
func facetValueOf(raw []byte) (facetValue, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return facetValue{}, false
	}
	switch x := v.(type) {
	case bool:
		return facetValue{rank: 0, b: x}, true
	case json.Number:
		f, err := x.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<63 {
			return facetValue{}, false // a float: not a facet value
		}
		return facetValue{rank: 1, num: f}, true
	case string:
		if u, ok := canonicalUUID(x); ok {
			x = u
		}
		return facetValue{rank: 2, str: x}, true
	}
	return facetValue{}, false
}
