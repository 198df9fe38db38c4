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
// nested. Decode (queryNode) → the engine's calls
// (Collection.Search, QuerySparse, collection.Fuse) → encode (the
// caller's scoredRecords).
//
// As in Qdrant (and its local mode), the filter of each level applies to
// every level below it, and-ed with theirs; a prefetch's limit defaults
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
		return h.searchLevel(c, n, f, nil, limit)
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
		return h.searchLevel(c, n, f, among, limit)
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
	var q map[string]json.RawMessage
	if err := json.Unmarshal(raw, &q); err != nil {
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

// searchLevel runs a level's own query (dense, multivector or sparse) among
// the points f allows and, if not nil, among.
func (h *Handler) searchLevel(c *collection.Collection, n *queryNode, f *meta.Filter, among []collection.ID, limit int) ([]collection.Scored, error) {
	using := ""
	if n.Using != nil {
		using = *n.Using
	}
	if ob, isOrder, err := orderByOf(n.Query); isOrder || err != nil {
		if err != nil {
			return nil, err
		}
		return orderedLevel(c, ob, f, among, limit)
	}
	schema := schemaOf(c)
	sub := collection.SubQuery{Field: using, Limit: limit}
	euclid := false
	if _, ok := schema.sparse[using]; ok {
		if present(n.LookupFrom) {
			return nil, unsupportedf("lookup_from with the sparse vector %q (strata looks up dense vectors)", using)
		}
		q, err := sparseQuery(n.Query, using)
		if err != nil {
			return nil, err
		}
		sub.Indices, sub.Values = q.indices, q.rows
		if sub.Indices == nil {
			sub.Indices, sub.Values = []uint32{}, []float32{}
		}
	} else {
		field, ok := schema.dense[using]
		if !ok {
			return nil, badRequestf("Wrong input: Not existing vector name error: %s", using)
		}
		if !present(n.Query) {
			return nil, badRequestf("query: a prefetch without a query (strata answers a query without one only at the top level)")
		}
		q, err := h.planQuery(c, field, n.Query, n.LookupFrom)
		if err != nil {
			return nil, err
		}
		if q.kind != queryNearest {
			return nil, unsupportedf("a query by example (recommend, discover, context, sample) inside a prefetch or fusion")
		}
		sub.Vector = q.rows
		if p := n.Params; p != nil {
			if sub.Ef, err = p.efFor(limit); err != nil {
				return nil, err
			}
			if p.Exact {
				sub.Ef = min(max(c.Len()+1, limit), limits.MaxEf)
			}
		}
		euclid = lowerIsBetter(field.Metric) // Qdrant's Euclid and Manhattan scores are distances
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
