package qdrant

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/limits"
)

// Qdrant's query API beyond one dense search: a sparse field's query
// (using a sparse field, query a SparseVector) and prefetch, the
// sub-queries whose lists the main query fuses ({"fusion": "rrf"|"dbsf"},
// {"rrf": {"k": n, "weights": [...]}}), re-scores (a vector query over the
// prefetched candidates, a formula: formula.go) or orders (queryorder.go),
// nested; each level's own query may be by example (examples.go: a point
// id, recommend, discover, context, sample, mmr). Decode (queryNode) → the engine's calls
// (Collection.Search, QuerySparse, collection.Fuse) → encode (the
// caller's scoredRecords).
//
// As in Qdrant (and its local mode), the filter of each level applies to
// every level below it, and-ed with theirs (so do the ids a level's query
// names, left out of it and below it); a prefetch's limit defaults
// to 10; offset applies to the main query only. Lists carry Qdrant's
// scores (Euclid: the distance, lower is better), which is what the local
// mode fuses.

// maxPrefetchDepth bounds the nesting of prefetches.
const maxPrefetchDepth = 8

// queryNode is one level of a query: the main query or a prefetch.
type queryNode struct {
	Prefetch       json.RawMessage `json:"prefetch"`
	Query          json.RawMessage `json:"query"`
	Using          *string         `json:"using"`
	Filter         json.RawMessage `json:"filter"`
	Params         *searchParams   `json:"params"`
	ScoreThreshold *float64        `json:"score_threshold"`
	Limit          *int            `json:"limit"`
	LookupFrom     json.RawMessage `json:"lookup_from"`
}

// needsHybrid reports whether a query request takes this file's path:
// prefetches, a fusion, or a sparse field's query.
func needsHybrid(c *collection.Collection, req *queryRequest) bool {
	if present(req.Prefetch) {
		return true
	}
	if _, isFusion, err := parseFusion(req.Query); isFusion || err != nil {
		return true
	}
	if _, isFormula, err := formulaOf(req.Query); isFormula || err != nil {
		return true
	}
	if req.Using == nil {
		return false
	}
	return slices.ContainsFunc(c.SparseFields(), func(f collection.SparseField) bool { return f.Name == *req.Using })
}

// hybridQuery answers a query request through queryNode.
func (h *Handler) hybridQuery(c *collection.Collection, req *queryRequest, limit, offset int) ([]collection.ID, []float64, error) {
	if present(req.Vector) {
		return nil, nil, badRequestf("unknown field \"vector\" (the query API takes \"query\")")
	}
	node := queryNode{Prefetch: req.Prefetch, Query: req.Query, Using: req.Using, Filter: req.Filter,
		Params: req.Params, ScoreThreshold: req.ScoreThreshold, LookupFrom: req.LookupFrom}
	if limit == 0 {
		return nil, nil, nil
	}
	list, err := h.runNode(c, &node, nil, limit+offset, 0)
	if err != nil {
		return nil, nil, err
	}
	list = list[min(offset, len(list)):]
	ids, scores := make([]collection.ID, len(list)), make([]float64, len(list))
	for i, s := range list {
		ids[i], scores[i] = s.ID, s.Score
	}
	return ids, scores, nil
}

// prefetchList reads "prefetch": one Prefetch or a list of them.
func prefetchList(raw json.RawMessage) ([]queryNode, error) {
	raw = bytes.TrimSpace(raw)
	if !present(raw) {
		return nil, nil
	}
	var list []queryNode
	if raw[0] == '{' {
		var one queryNode
		if err := strictUnmarshal(raw, &one); err != nil {
			return nil, badRequestf("prefetch: %v", err)
		}
		list = []queryNode{one}
	} else if err := strictUnmarshal(raw, &list); err != nil {
		return nil, badRequestf("prefetch must be a Prefetch or a list of them: %v", err)
	}
	return list, nil
}

// runNode answers one level, among the points parent allows.
func (h *Handler) runNode(c *collection.Collection, n *queryNode, parent *meta.Filter, limit, depth int) ([]collection.Scored, error) {
	if depth > maxPrefetchDepth {
		return nil, badRequestf("prefetch nested deeper than %d levels", maxPrefetchDepth)
	}
	own, err := compileFilter(n.Filter)
	if err != nil {
		return nil, err
	}
	f := parent
	switch {
	case own == nil:
	case f == nil:
		f = own
	default:
		f = meta.And(f, own)
	}
	inner, err := prefetchList(n.Prefetch)
	if err != nil {
		return nil, err
	}
	if err := limits.CheckFusedQueries(max(len(inner), 1)); err != nil {
		return nil, badRequestf("prefetch: %v", err)
	}
	fusion, isFusion, err := parseFusion(n.Query)
	if err != nil {
		return nil, err
	}
	form, isFormula, err := formulaOf(n.Query)
	if err != nil {
		return nil, err
	}
	var planned *vectorQuery
	if !isFusion && !isFormula {
		// The level's own query is decoded before its prefetches run: the
		// points it names by id are left out of every level below it too,
		// as local mode adds them to the level's filter.
		if planned, err = h.planLevel(c, n); err != nil {
			return nil, err
		}
		if planned != nil && len(planned.exclude) > 0 {
			f = meta.And(f, meta.Not(idFilter(planned.exclude)))
		}
	}
	if limit <= 0 {
		return []collection.Scored{}, nil
	}
	if len(inner) == 0 {
		if isFusion {
			return nil, badRequestf("a fusion query needs prefetch: the lists it fuses")
		}
		if isFormula {
			return nil, badRequestf("a formula query needs prefetch: the candidates it scores")
		}
		return h.searchLevel(c, n, planned, f, nil, limit)
	}
	lists := make([][]collection.Scored, len(inner))
	for i := range inner {
		innerLimit := 10
		if inner[i].Limit != nil {
			innerLimit = *inner[i].Limit
		}
		if innerLimit < 0 || innerLimit > h.limits.MaxK {
			return nil, badRequestf("prefetch limit must be in [0, %d], got %d", h.limits.MaxK, innerLimit)
		}
		if lists[i], err = h.runNode(c, &inner[i], f, innerLimit, depth+1); err != nil {
			return nil, err
		}
	}
	if isFormula {
		scored, err := form.rescore(c, lists, limit)
		if err != nil {
			return nil, err
		}
		if t := n.ScoreThreshold; t != nil {
			scored = slices.DeleteFunc(scored, func(s collection.Scored) bool { return s.Score < *t })
		}
		return scored, nil
	}
	if !isFusion {
		// Re-score the prefetched candidates with this level's query.
		among := []collection.ID{} // none prefetched: none to re-score
		seen := map[collection.ID]bool{}
		for _, list := range lists {
			for _, s := range list {
				if !seen[s.ID] {
					seen[s.ID] = true
					among = append(among, s.ID)
				}
			}
		}
		return h.searchLevel(c, n, planned, f, among, limit)
	}
	fused, err := collection.Fuse(lists, fusion, limit)
	if err != nil {
		return nil, err
	}
	if t := n.ScoreThreshold; t != nil {
		fused = slices.DeleteFunc(fused, func(s collection.Scored) bool { return s.Score < *t })
	}
	return fused, nil
}

// parseFusion reads a fusion query, {"fusion": "rrf"|"dbsf"} or
// {"rrf": {"k": n}}; isFusion is false for any other query.
func parseFusion(raw json.RawMessage) (f collection.Fusion, isFusion bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return f, false, nil
	}
	q, err := objectFields(raw)
	if err != nil {
		return f, false, badRequestf("query: %v", err)
	}
	if name, ok := q["fusion"]; ok {
		var s string
		if len(q) != 1 || json.Unmarshal(name, &s) != nil {
			return f, false, badRequestf("query: {\"fusion\": \"rrf\" | \"dbsf\"}, got %s", truncate(string(raw)))
		}
		m, err := collection.ParseFusion(s)
		if err != nil {
			return f, false, badRequestf("query: fusion %q (rrf or dbsf)", s)
		}
		return collection.Fusion{Method: m}, true, nil
	}
	if params, ok := q["rrf"]; ok {
		var p struct {
			K       *float64  `json:"k"`
			Weights []float64 `json:"weights"`
		}
		if len(q) != 1 || strictUnmarshal(params, &p) != nil {
			return f, false, badRequestf("query: {\"rrf\": {\"k\": n, \"weights\": [w, ...]}}, got %s", truncate(string(raw)))
		}
		f = collection.Fusion{Method: collection.RRF, Weights: p.Weights}
		if p.K != nil {
			if *p.K < 1 {
				return f, false, badRequestf("rrf k must be at least 1, got %v", *p.K)
			}
			f.RRFK = *p.K
		}
		return f, true, nil
	}
	return f, false, nil
}

// planLevel decodes a level's query against its dense field (nil for an
// order_by query or a sparse field's query, which searchLevel reads).
func (h *Handler) planLevel(c *collection.Collection, n *queryNode) (*vectorQuery, error) {
	if _, isOrder, _ := orderByOf(n.Query); isOrder {
		return nil, nil
	}
	using := ""
	if n.Using != nil {
		using = *n.Using
	}
	schema := schemaOf(c)
	if _, ok := schema.sparse[using]; ok {
		return nil, nil
	}
	field, ok := schema.dense[using]
	if !ok {
		return nil, badRequestf("Wrong input: Not existing vector name error: %s", using)
	}
	return h.planQuery(c, field, n.Query, n.LookupFrom)
}

// searchLevel runs a level's own query (q, planned by planLevel: nearest,
// by example, sample, none; else order_by or a sparse field's query) among
// the points f allows and, if not nil, among.
func (h *Handler) searchLevel(c *collection.Collection, n *queryNode, q *vectorQuery, f *meta.Filter, among []collection.ID, limit int) ([]collection.Scored, error) {
	if ob, isOrder, err := orderByOf(n.Query); isOrder || err != nil {
		if err != nil {
			return nil, err
		}
		return orderedLevel(c, ob, f, among, limit)
	}
	if q != nil && (q.kind != queryNearest || q.mmr != nil) {
		return h.exampleLevel(c, n, q, f, among, limit)
	}
	using := ""
	if n.Using != nil {
		using = *n.Using
	}
	sub := collection.SubQuery{Field: using, Limit: limit}
	euclid := false
	if q == nil { // a sparse field's query
		if present(n.LookupFrom) {
			return nil, unsupportedf("lookup_from with the sparse vector %q (strata looks up dense vectors)", using)
		}
		sq, err := sparseQuery(n.Query, using)
		if err != nil {
			return nil, err
		}
		sub.Indices, sub.Values = sq.indices, sq.rows
		if sub.Indices == nil {
			sub.Indices, sub.Values = []uint32{}, []float32{}
		}
	} else {
		sub.Vector = q.rows
		if p := n.Params; p != nil {
			ef, err := p.efFor(limit)
			if err != nil {
				return nil, err
			}
			sub.Ef = ef
			if p.Exact {
				sub.Ef = min(max(c.Len()+1, limit), limits.MaxEf)
			}
		}
		euclid = lowerIsBetter(q.field.Metric) // Qdrant's Euclid and Manhattan scores are distances
	}
	list, err := c.Search(sub, f, among, 1)
	if err != nil {
		return nil, err
	}
	if euclid {
		for i := range list {
			list[i].Score = math.Abs(list[i].Score) // Qdrant's Euclid score is the distance
		}
	}
	if t := n.ScoreThreshold; t != nil {
		list = slices.DeleteFunc(list, func(s collection.Scored) bool {
			return (euclid && s.Score > *t) || (!euclid && s.Score < *t)
		})
	}
	return list, nil
}

// exampleLevel answers a level whose query is not one plain nearest
// vector (by example, mmr, sample, none) through runQuery, the top-level
// path, restricted to among as local mode restricts it (a has_id filter).
// Local mode ignores score_threshold for sample and for no query, and
// refuses none with mmr at the top level (search1): so does this.
func (h *Handler) exampleLevel(c *collection.Collection, n *queryNode, q *vectorQuery, f *meta.Filter, among []collection.ID, limit int) ([]collection.Scored, error) {
	if among != nil {
		if len(among) == 0 {
			return []collection.Scored{}, nil
		}
		f = meta.And(f, idFilter(among))
	}
	if q.mmr != nil && n.ScoreThreshold != nil {
		return nil, unsupportedf("score_threshold with query.mmr")
	}
	ef := 0
	if p := n.Params; p != nil {
		if p.HnswEf != nil {
			ef = max(*p.HnswEf, limit)
		}
		if p.Exact {
			ef = min(max(c.Len()+1, limit), limits.MaxEf)
			q.exact = true
		}
	}
	got, err := h.runQuery(c, q, limit, ef, f)
	if err != nil {
		return nil, err
	}
	higher, t := q.higherIsBetter(), n.ScoreThreshold
	if q.kind == queryNone || q.kind == querySample {
		t = nil
	}
	list := make([]collection.Scored, 0, len(got.ids))
	for i, id := range got.ids {
		s := got.scores[i]
		if t != nil && ((higher && s < *t) || (!higher && s > *t)) {
			continue
		}
		list = append(list, collection.Scored{ID: id, Score: s})
	}
	return list, nil
}

// sparseQuery reads a sparse field's query: a SparseVector, or
// {"nearest": SparseVector}.
func sparseQuery(raw json.RawMessage, field string) (pointValue, error) {
	raw = bytes.TrimSpace(raw)
	if !present(raw) {
		return pointValue{}, badRequestf("query: the sparse field %q needs a sparse vector {\"indices\", \"values\"}", field)
	}
	var q map[string]json.RawMessage
	if raw[0] == '{' && json.Unmarshal(raw, &q) == nil {
		if nearest, ok := q["nearest"]; ok && len(q) == 1 {
			raw = bytes.TrimSpace(nearest)
		}
	}
	indices, values, err := parseSparseVector(raw, field)
	if err != nil {
		return pointValue{}, err
	}
	return pointValue{sparse: true, indices: indices, rows: values}, nil
}
