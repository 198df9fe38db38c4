package qdrant

import (
	"context"
	"encoding/json"
)

// The recommend and discover APIs (Qdrant's RecommendRequest and
// DiscoverRequest, from before the universal query) are the query API
// spelled differently: each request becomes a queryRequest whose "query"
// is {"recommend": ...} or {"discover": ...} / {"context": ...}, and is
// answered by search1, so scores, filters, lookup_from and limits are
// those of query_points (examples.go). Their answers are lists of
// ScoredPoint, without query's {"points": ...}.

// recommendRequest is Qdrant's RecommendRequest.
type recommendRequest struct {
	Positive       []json.RawMessage `json:"positive"`
	Negative       []json.RawMessage `json:"negative"`
	Strategy       *string           `json:"strategy"`
	Filter         json.RawMessage   `json:"filter"`
	Params         *searchParams     `json:"params"`
	Limit          *int              `json:"limit"`
	Offset         *int              `json:"offset"`
	WithPayload    json.RawMessage   `json:"with_payload"`
	WithVector     json.RawMessage   `json:"with_vector"`
	ScoreThreshold *float64          `json:"score_threshold"`
	Using          *string           `json:"using"`
	LookupFrom     json.RawMessage   `json:"lookup_from"`
	ShardKey       json.RawMessage   `json:"shard_key"`
}

// query is the request as a query_points request.
func (req *recommendRequest) query() (*queryRequest, error) {
	if req.Limit == nil {
		return nil, badRequestf("Format error in JSON body: missing field `limit`")
	}
	in, err := json.Marshal(recommendInput{Positive: req.Positive, Negative: req.Negative, Strategy: req.Strategy})
	if err != nil {
		return nil, err
	}
	q, _ := json.Marshal(map[string]json.RawMessage{"recommend": in})
	return &queryRequest{Query: q, Using: usingOf(req.Using), Filter: req.Filter, Params: req.Params,
		ScoreThreshold: req.ScoreThreshold, Limit: req.Limit, Offset: req.Offset,
		WithVector: req.WithVector, WithPayload: req.WithPayload, LookupFrom: req.LookupFrom}, nil
}

// usingOf is "using" of the old APIs: absent means the unnamed vector,
// which search1 looks up when using is set.
func usingOf(using *string) *string {
	if using != nil {
		return using
	}
	return new(string)
}

// discoverRequest is Qdrant's DiscoverRequest.
type discoverRequest struct {
	Target      json.RawMessage `json:"target"`
	Context     []contextPair   `json:"context"`
	Filter      json.RawMessage `json:"filter"`
	Params      *searchParams   `json:"params"`
	Limit       *int            `json:"limit"`
	Offset      *int            `json:"offset"`
	WithPayload json.RawMessage `json:"with_payload"`
	WithVector  json.RawMessage `json:"with_vector"`
	Using       *string         `json:"using"`
	LookupFrom  json.RawMessage `json:"lookup_from"`
	ShardKey    json.RawMessage `json:"shard_key"`
}

// query is the request as a query_points request: a discover query with
// a target, a context query without one (Qdrant's "context search").
func (req *discoverRequest) query() (*queryRequest, error) {
	if req.Limit == nil {
		return nil, badRequestf("Format error in JSON body: missing field `limit`")
	}
	pairs := req.Context
	if pairs == nil {
		pairs = []contextPair{}
	}
	var q []byte
	var err error
	if present(req.Target) {
		q, err = json.Marshal(map[string]any{"discover": map[string]any{"target": req.Target, "context": pairs}})
	} else {
		if len(pairs) == 0 {
			return nil, badRequestf("Validation error: target or context is required (discover)")
		}
		q, err = json.Marshal(map[string]any{"context": pairs})
	}
	if err != nil {
		return nil, err
	}
	return &queryRequest{Query: q, Using: usingOf(req.Using), Filter: req.Filter, Params: req.Params,
		Limit: req.Limit, Offset: req.Offset, WithVector: req.WithVector, WithPayload: req.WithPayload,
		LookupFrom: req.LookupFrom}, nil
}

// recommendPoints answers POST /collections/{name}/points/recommend.
func (h *Handler) recommendPoints(_ context.Context, name string, req *recommendRequest) ([]record, error) {
	out, err := oldAPIBatch(h, name, []recommendRequest{*req})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// recommendBatchRequest is the body of recommend_batch.
type recommendBatchRequest struct {
	Searches []recommendRequest `json:"searches"`
}

// recommendBatch answers POST /collections/{name}/points/recommend/batch.
func (h *Handler) recommendBatch(_ context.Context, name string, req *recommendBatchRequest) ([][]record, error) {
	return oldAPIBatch(h, name, req.Searches)
}

// discoverPoints answers POST /collections/{name}/points/discover.
func (h *Handler) discoverPoints(_ context.Context, name string, req *discoverRequest) ([]record, error) {
	out, err := oldAPIBatch(h, name, []discoverRequest{*req})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// discoverBatchRequest is the body of discover_batch.
type discoverBatchRequest struct {
	Searches []discoverRequest `json:"searches"`
}

// discoverBatch answers POST /collections/{name}/points/discover/batch.
func (h *Handler) discoverBatch(_ context.Context, name string, req *discoverBatchRequest) ([][]record, error) {
	return oldAPIBatch(h, name, req.Searches)
}

// oldAPIBatch translates a batch of recommend or discover requests and
// answers it, checked whole against the limits first, each answer a list
// of ScoredPoint.
func oldAPIBatch[R any, P interface {
	*R
	query() (*queryRequest, error)
}](h *Handler, name string, reqs []R) ([][]record, error) {
	c, err := h.named(name)
	if err != nil {
		return nil, err
	}
	qs := make([]queryRequest, len(reqs))
	for i := range reqs {
		q, err := P(&reqs[i]).query()
		if err != nil {
			return nil, err
		}
		qs[i] = *q
	}
	if err := h.checkBatch(c, qs); err != nil {
		return nil, err
	}
	out := make([][]record, len(qs))
	for i := range qs {
		if out[i], err = h.search1(c, &qs[i], false); err != nil {
			return nil, err
		}
	}
	return out, nil
}
