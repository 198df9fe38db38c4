package qdrant

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/metric"
)

type searchParams struct {
	HnswEf       *int            `json:"hnsw_ef"`
	Exact        bool            `json:"exact"`
	Quantization json.RawMessage `json:"quantization"`
	IndexedOnly  json.RawMessage `json:"indexed_only"`
	Acorn        json.RawMessage `json:"acorn"`
}

// queryRequest is Qdrant's QueryRequest and, with Vector, SearchRequest.
type queryRequest struct {
	Query          json.RawMessage `json:"query"`
	Vector         json.RawMessage `json:"vector"` // search API
	Prefetch       json.RawMessage `json:"prefetch"`
	Using          *string         `json:"using"`
	Filter         json.RawMessage `json:"filter"`
	Params         *searchParams   `json:"params"`
	ScoreThreshold *float64        `json:"score_threshold"`
	Limit          *int            `json:"limit"`
	Offset         *int            `json:"offset"`
	WithVector     json.RawMessage `json:"with_vector"`
	WithPayload    json.RawMessage `json:"with_payload"`
	LookupFrom     json.RawMessage `json:"lookup_from"`
	ShardKey       json.RawMessage `json:"shard_key"`
	// nearest is the query {"nearest": [...]} the gRPC door or
	// decodeQueryRequest decoded already (one dense vector, checked
	// finite), instead of Query: the JSON round trip of its numbers was the
	// largest part of the door's own cost of a gRPC query, and reading
	// them again a tenth of a REST one. search1 reads it; every other
	// reader gets Query from jsonQuery.
	nearest []float32
}

// jsonQuery moves nearest into Query as JSON, for the readers of the
// query other than search1's plain nearest search (hybrid, groups,
// multivectors).
func (req *queryRequest) jsonQuery() error {
	if req.nearest == nil {
		return nil
	}
	raw, err := json.Marshal(map[string][]float32{"nearest": req.nearest})
	if err != nil {
		return badRequestf("%v", err)
	}
	req.Query, req.nearest = raw, nil
	return nil
}

// search answers one query or search request.
func (h *Handler) search1(c *collection.Collection, req *queryRequest, searchAPI bool) ([]record, error) {
	limit, offset := 10, 0
	if req.Limit != nil {
		limit = *req.Limit
	}
	if req.Offset != nil {
		offset = *req.Offset
	}
	if limit < 0 || offset < 0 || limit+offset > h.limits.MaxK {
		return nil, badRequestf("limit and offset must be non-negative with limit+offset at most %d "+
			"(the server's limit: strata-server --max-k)", h.limits.MaxK)
	}
	sel, err := parsePayloadSelector(req.WithPayload, false)
	if err != nil {
		return nil, err
	}
	withVector, err := parseWithVector(req.WithVector, false)
	if err != nil {
		return nil, err
	}
	if ob, isOrder, err := orderByOf(req.Query); !searchAPI && !present(req.Prefetch) && (isOrder || err != nil) {
		if err != nil {
			return nil, err
		}
		if req.ScoreThreshold != nil {
			return nil, badRequestf("score_threshold cannot be used with an order_by query")
		}
		if err := h.limits.Answer(limit, c.Options().Dim, withVector); err != nil {
			return nil, err
		}
		p, err := compileFilter(req.Filter)
		if err != nil {
			return nil, err
		}
		return orderedQuery(c, ob, p, limit, offset, sel, withVector)
	}
	using := ""
	if req.Using != nil {
		using = *req.Using
	}
	raw := req.Query
	if searchAPI {
		// The search API names the field inside the vector:
		// {"name": ..., "vector": [...]}.
		raw = bytes.TrimSpace(req.Vector)
		if len(raw) > 0 && raw[0] == '{' {
			var named struct {
				Name   string          `json:"name"`
				Vector json.RawMessage `json:"vector"`
			}
			if err := strictUnmarshal(raw, &named); err != nil {
				return nil, badRequestf("vector %s: a named vector is {\"name\", \"vector\"}", truncate(string(raw)))
			}
			using, raw = named.Name, named.Vector
		}
	}
	schema := schemaOf(c)
	if _, sparse := schema.sparse[using]; (searchAPI && sparse) || (!searchAPI && needsHybrid(c, req)) {
		if err := h.limits.Answer(limit, c.Options().Dim, withVector); err != nil {
			return nil, err
		}
		if err := req.jsonQuery(); err != nil {
			return nil, err
		}
		hybrid := req
		if searchAPI { // a NamedSparseVector {"name", "vector": {"indices", "values"}}
			hybrid = &queryRequest{Query: raw, Using: &using, Filter: req.Filter, ScoreThreshold: req.ScoreThreshold}
		}
		ids, scores, err := h.hybridQuery(c, hybrid, limit, offset)
		if err != nil {
			return nil, err
		}
		return scoredRecords(c, ids, scores, sel, withVector)
	}
	field, ok := schema.dense[using]
	if !ok && (searchAPI || present(req.Query) || req.nearest != nil || req.Using != nil) {
		return nil, badRequestf("Wrong input: Not existing vector name error: %s", using)
	}
	dim := field.Dim
	if err := h.limits.Answer(limit, dim, withVector); err != nil {
		return nil, err
	}
	p, err := compileFilter(req.Filter)
	if err != nil {
		return nil, err
	}
	var q *vectorQuery
	switch {
	case searchAPI && field.Multivector != collection.SingleVector:
		q = &vectorQuery{kind: queryNearest, field: field}
		q.rows, q.nq, err = parseMultiQuery(raw, dim)
	case searchAPI:
		q = &vectorQuery{kind: queryNearest, field: field, nq: 1}
		q.rows, err = parseVector(raw, dim)
	case present(req.Vector):
		return nil, badRequestf("unknown field \"vector\" (the query API takes \"query\")")
	case req.nearest != nil && field.Multivector == collection.SingleVector:
		if len(req.nearest) != dim {
			return nil, badRequestf("Wrong input: Vector dimension error: expected dim: %d, got %d", dim, len(req.nearest))
		}
		q = &vectorQuery{kind: queryNearest, field: field, rows: req.nearest, nq: 1}
	default:
		if err := req.jsonQuery(); err != nil {
			return nil, err
		}
		q, err = h.planQuery(c, field, req.Query, req.LookupFrom)
	}
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		return []record{}, nil
	}
	if q.mmr != nil {
		if req.ScoreThreshold != nil {
			// Local mode drops candidates below the threshold before
			// picking; the engine's MMR has no threshold to apply there.
			return nil, unsupportedf("score_threshold with query.mmr")
		}
		if q.mmr.candidates < 0 {
			q.mmr.candidates = limit
		}
	}
	k := limit + offset
	ef, err := req.Params.efFor(k)
	if err != nil {
		return nil, err
	}
	if req.Params != nil {
		if req.Params.Exact {
			ef = max(c.Len()+1, k)
			q.exact = true
		}
	}
	got, err := h.runQuery(c, q, k, ef, p)
	if err != nil {
		return nil, err
	}
	from, to := min(offset, len(got.ids)), len(got.ids)
	higher := q.higherIsBetter()
	if t := req.ScoreThreshold; t != nil && q.kind != queryNone && q.kind != querySample {
		for i := from; i < to; i++ {
			if score := got.scores[i]; (!higher && score > *t) || (higher && score < *t) {
				to = i // scores are in ranking order: the rest are beyond too
				break
			}
		}
	}
	return scoredRecords(c, got.ids[from:to], got.scores[from:to], sel, withVector)
}

// qdrantScore is Qdrant's score for a strata distance: the similarity for
// cosine (1 - cos) and dot (1 - dot), the (unsquared) distance for Euclid,
// the distance itself for Manhattan.
func qdrantScore(d float32, m metric.Metric) float64 {
	switch m {
	case metric.L2:
		return math.Sqrt(math.Max(float64(d), 0))
	case metric.Manhattan:
		return float64(d)
	}
	return 1 - float64(d)
}

// lowerIsBetter reports whether a lower score ranks first under m
// (Euclid and Manhattan, Qdrant's distances; the rest are similarities).
func lowerIsBetter(m metric.Metric) bool { return m == metric.L2 || m == metric.Manhattan }

// zeroVersion is the version of every scored point (strata keeps no
// per-point version): shared, read by the encoders, never written.
var zeroVersion uint64

func scoredRecords(c *collection.Collection, ids []collection.ID, scores []float64, sel payloadSelector, withVector bool) ([]record, error) {
	var recs []record
	if sel.none() && !withVector {
		// Ids and scores only: the hits need no lookup (the native door's
		// answer without metadata does none either).
		recs = make([]record, len(ids))
		for i, id := range ids {
			recs[i].ID = pointID{id}
		}
	} else {
		var err error
		if recs, err = records(c, ids, sel, withVector); err != nil {
			return nil, err
		}
	}
	// records keeps the order of ids, leaving out the ids gone since:
	// each record's score is that of the next id equal to its own. One
	// slice holds the scores the records point into.
	own := make([]float64, len(recs))
	at := 0
	for i := range recs {
		for at < len(ids) && ids[at] != recs[i].ID.ID {
			at++
		}
		own[i] = scores[at]
		at++
		recs[i].Score, recs[i].Version = &own[i], &zeroVersion
	}
	return recs, nil
}

// queryResponse is Qdrant's QueryResponse.
type queryResponse struct {
	Points []record `json:"points"`
}

// batchRequest is the body of query_batch and search_batch.
type batchRequest struct {
	Searches []queryRequest `json:"searches"`
}

// query is query_points.
func (h *Handler) query(_ context.Context, name string, req *queryRequest) (queryResponse, error) {
	c, err := h.named(name)
	if err != nil {
		return queryResponse{}, err
	}
	points, err := h.search1(c, req, false)
	if err != nil {
		return queryResponse{}, err
	}
	return queryResponse{Points: points}, nil
}

// queryBatch is query_batch_points: one answer per search, the batch
// checked whole against the limits first.
func (h *Handler) queryBatch(_ context.Context, name string, req *batchRequest) ([]queryResponse, error) {
	c, err := h.named(name)
	if err != nil {
		return nil, err
	}
	if err := h.checkBatch(c, req.Searches); err != nil {
		return nil, err
	}
	out := make([]queryResponse, len(req.Searches))
	for i := range req.Searches {
		points, err := h.search1(c, &req.Searches[i], false)
		if err != nil {
			return nil, err
		}
		out[i] = queryResponse{Points: points}
	}
	return out, nil
}

// search is the older search API.
func (h *Handler) search(_ context.Context, name string, req *queryRequest) ([]record, error) {
	c, err := h.named(name)
	if err != nil {
		return nil, err
	}
	if present(req.Query) || req.nearest != nil {
		return nil, badRequestf("unknown field \"query\" (the search API takes \"vector\")")
	}
	return h.search1(c, req, true)
}

// searchBatch is search_batch: one list of points per search.
func (h *Handler) searchBatch(_ context.Context, name string, req *batchRequest) ([][]record, error) {
	c, err := h.named(name)
	if err != nil {
		return nil, err
	}
	if err := h.checkBatch(c, req.Searches); err != nil {
		return nil, err
	}
	out := make([][]record, len(req.Searches))
	for i := range req.Searches {
		if present(req.Searches[i].Query) {
			return nil, badRequestf("searches[%d]: unknown field \"query\" (the search API takes \"vector\")", i)
		}
		if out[i], err = h.search1(c, &req.Searches[i], true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// restBatch is the REST route of a batch call: its answers are sent as a
// batchResult, encoded one search at a time.
func restBatch[Req, A any](h *Handler, fn qdrantCall[Req, []A]) route {
	single := restOn(h, fn)
	return func(r *http.Request) (any, error) {
		v, err := single(r)
		if err != nil {
			return nil, err
		}
		answers := v.([]A)
		out := make(batchResult, len(answers))
		for i := range answers {
			out[i] = answers[i]
		}
		return out, nil
	}
}

// checkBatch checks a batch's answer as a whole against the guard's
// limits before any search runs: each search alone is within them, a
// hundred of them need not be. The estimate counts vectors for every
// search when any asks for them.
func (h *Handler) checkBatch(c *collection.Collection, searches []queryRequest) error {
	results, vectors := 0, false
	for i := range searches {
		k := 10
		if l := searches[i].Limit; l != nil && *l > 0 {
			k = *l
		}
		if o := searches[i].Offset; o != nil && *o > 0 {
			k += *o
		}
		results += min(k, h.limits.MaxK+1) // search1 refuses more, with its own message
		if v, err := parseWithVector(searches[i].WithVector, false); err == nil && v {
			vectors = true
		}
	}
	return h.limits.Answer(results, c.Options().Dim, vectors)
}
