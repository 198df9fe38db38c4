package qdrant

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
)

// Groups (search_groups, recommend_groups, query_points_groups): the
// points a search ranks, grouped by the value of a payload key, as
// qdrant-client's local mode groups them. A point belongs to the group of
// each distinct value at group_by (the elements of a list there), which
// must be strings or integers: a point with any other value there (a
// float, a bool, null, an object) joins no group at all, as Qdrant drops
// it. Groups come in the order of their best point; each holds its
// group_size best points, and the first limit groups are answered. The
// ranked points are read in growing pages until those groups are full or
// the points run out (or the server's --max-k is reached), so the answer
// is that of ranking every point. with_lookup adds to each group the
// point of another collection whose id is the group's value.

// groupSpec is what the three groups requests share.
type groupSpec struct {
	GroupBy    string          `json:"group_by"`
	GroupSize  *int            `json:"group_size"`
	Limit      *int            `json:"limit"`
	WithLookup json.RawMessage `json:"with_lookup"`
}

// searchGroupsRequest is Qdrant's SearchGroupsRequest.
type searchGroupsRequest struct {
	Vector         json.RawMessage `json:"vector"`
	Filter         json.RawMessage `json:"filter"`
	Params         *searchParams   `json:"params"`
	WithPayload    json.RawMessage `json:"with_payload"`
	WithVector     json.RawMessage `json:"with_vector"`
	ScoreThreshold *float64        `json:"score_threshold"`
	ShardKey       json.RawMessage `json:"shard_key"`
	groupSpec
}

// recommendGroupsRequest is Qdrant's RecommendGroupsRequest.
type recommendGroupsRequest struct {
	Positive       []json.RawMessage `json:"positive"`
	Negative       []json.RawMessage `json:"negative"`
	Strategy       *string           `json:"strategy"`
	Filter         json.RawMessage   `json:"filter"`
	Params         *searchParams     `json:"params"`
	WithPayload    json.RawMessage   `json:"with_payload"`
	WithVector     json.RawMessage   `json:"with_vector"`
	ScoreThreshold *float64          `json:"score_threshold"`
	Using          *string           `json:"using"`
	LookupFrom     json.RawMessage   `json:"lookup_from"`
	ShardKey       json.RawMessage   `json:"shard_key"`
	groupSpec
}

// queryGroupsRequest is Qdrant's QueryGroupsRequest.
type queryGroupsRequest struct {
	Prefetch       json.RawMessage `json:"prefetch"`
	Query          json.RawMessage `json:"query"`
	Using          *string         `json:"using"`
	Filter         json.RawMessage `json:"filter"`
	Params         *searchParams   `json:"params"`
	ScoreThreshold *float64        `json:"score_threshold"`
	WithVector     json.RawMessage `json:"with_vector"`
	WithPayload    json.RawMessage `json:"with_payload"`
	LookupFrom     json.RawMessage `json:"lookup_from"`
	ShardKey       json.RawMessage `json:"shard_key"`
	groupSpec
}

// pointGroup is Qdrant's PointGroup.
type pointGroup struct {
	ID     any      `json:"id"`
	Hits   []record `json:"hits"`
	Lookup *record  `json:"lookup,omitempty"`
}

// groupsResult is Qdrant's GroupsResult.
type groupsResult struct {
	Groups []pointGroup `json:"groups"`
}

// searchGroups answers POST /collections/{name}/points/search/groups.
func (h *Handler) searchGroups(_ context.Context, name string, req *searchGroupsRequest) (groupsResult, error) {
	if req.GroupSize == nil || req.Limit == nil {
		return groupsResult{}, badRequestf("Format error in JSON body: group_size and limit are required")
	}
	q := &queryRequest{Vector: req.Vector, Filter: req.Filter, Params: req.Params, ScoreThreshold: req.ScoreThreshold,
		WithVector: req.WithVector, WithPayload: req.WithPayload}
	return h.groups(name, q, true, &req.groupSpec)
}

// recommendGroups answers POST /collections/{name}/points/recommend/groups.
func (h *Handler) recommendGroups(_ context.Context, name string, req *recommendGroupsRequest) (groupsResult, error) {
	if req.GroupSize == nil || req.Limit == nil {
		return groupsResult{}, badRequestf("Format error in JSON body: group_size and limit are required")
	}
	rec := recommendRequest{Positive: req.Positive, Negative: req.Negative, Strategy: req.Strategy, Filter: req.Filter,
		Params: req.Params, Limit: req.Limit, WithPayload: req.WithPayload, WithVector: req.WithVector,
		ScoreThreshold: req.ScoreThreshold, Using: req.Using, LookupFrom: req.LookupFrom}
	q, err := rec.query()
	if err != nil {
		return groupsResult{}, err
	}
	return h.groups(name, q, false, &req.groupSpec)
}

// queryGroups answers POST /collections/{name}/points/query/groups
// (group_size 3 and limit 10 by default, as Qdrant's).
func (h *Handler) queryGroups(_ context.Context, name string, req *queryGroupsRequest) (groupsResult, error) {
	q := &queryRequest{Prefetch: req.Prefetch, Query: req.Query, Using: req.Using, Filter: req.Filter, Params: req.Params,
		ScoreThreshold: req.ScoreThreshold, WithVector: req.WithVector, WithPayload: req.WithPayload, LookupFrom: req.LookupFrom}
	spec := req.groupSpec
	if spec.GroupSize == nil {
		spec.GroupSize = new(int)
		*spec.GroupSize = 3
	}
	if spec.Limit == nil {
		spec.Limit = new(int)
		*spec.Limit = 10
	}
	return h.groups(name, q, false, &spec)
}

// groupKey is a group's value: a string or an integer.
type groupKey struct {
	str   string
	num   int64
	isNum bool
}

func (k groupKey) json() any {
	if k.isNum {
		return k.num
	}
	return k.str
}

// groupKeys returns the distinct group values of a point's payload in
// document order, or false when the point joins no group.
func groupKeys(doc []byte, path meta.Path) ([]groupKey, bool) {
	if doc == nil {
		return nil, false
	}
	d, err := meta.ReadDocument(doc)
	if err != nil {
		return nil, false
	}
	var keys []groupKey
	for _, raw := range d.ValuesAt(path) {
		var k groupKey
		switch {
		case len(raw) > 0 && raw[0] == '"':
			if json.Unmarshal(raw, &k.str) != nil {
				return nil, false
			}
		default:
			n, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil { // a float, a bool, null, an object or a list
				return nil, false
			}
			k = groupKey{num: n, isNum: true}
		}
		dup := false
		for _, seen := range keys {
			dup = dup || seen == k
		}
		if !dup {
			keys = append(keys, k)
		}
	}
	return keys, len(keys) > 0
}

// groups answers q grouped by spec.
func (h *Handler) groups(name string, q *queryRequest, searchAPI bool, spec *groupSpec) (groupsResult, error) {
	c, err := h.named(name)
	if err != nil {
		return groupsResult{}, err
	}
	path, err := checkKey(spec.GroupBy, "group_by")
	if err != nil {
		return groupsResult{}, err
	}
	limit, size := *spec.Limit, *spec.GroupSize
	if limit < 1 || size < 1 {
		return groupsResult{}, badRequestf("Validation error: limit and group_size must be at least 1, got %d and %d", limit, size)
	}
	sel, err := parsePayloadSelector(q.WithPayload, false)
	if err != nil {
		return groupsResult{}, err
	}
	withVector, err := parseWithVector(q.WithVector, false)
	if err != nil {
		return groupsResult{}, err
	}
	if limit > h.limits.MaxK || size > h.limits.MaxK {
		return groupsResult{}, badRequestf("limit and group_size must be at most %d (the server's limit: strata-server --max-k)", h.limits.MaxK)
	}
	if err := h.limits.Answer(limit*size, c.Options().Dim, withVector); err != nil {
		return groupsResult{}, err
	}
	lookup, err := h.parseWithLookup(spec.WithLookup)
	if err != nil {
		return groupsResult{}, err
	}
	type group struct {
		key  groupKey
		hits []collection.ID
	}
	var order []*group
	var scores map[collection.ID]float64
	for k := min(max(4*limit*size, 64), h.limits.MaxK); ; k = min(4*k, h.limits.MaxK) {
		page := *q
		page.Limit, page.Offset = &k, nil
		page.WithPayload, page.WithVector = json.RawMessage("true"), nil
		ranked, err := h.search1(c, &page, searchAPI)
		if err != nil {
			return groupsResult{}, err
		}
		order, scores = nil, make(map[collection.ID]float64, len(ranked))
		byKey := map[groupKey]*group{}
		for _, p := range ranked {
			keys, ok := groupKeys(p.Payload, path)
			if !ok {
				continue
			}
			scores[p.ID.ID] = *p.Score
			for _, key := range keys {
				g := byKey[key]
				if g == nil {
					g = &group{key: key}
					byKey[key] = g
					order = append(order, g)
				}
				if len(g.hits) < size {
					g.hits = append(g.hits, p.ID.ID)
				}
			}
		}
		full := len(order) >= limit
		for _, g := range order[:min(limit, len(order))] {
			full = full && len(g.hits) == size
		}
		// An approximate search may answer fewer than k with more points
		// left: only asking for every point ends the reading.
		if full || k >= c.Len() || k == h.limits.MaxK {
			break
		}
	}
	order = order[:min(limit, len(order))]
	var ids []collection.ID
	var hitScores []float64
	seen := map[collection.ID]bool{}
	for _, g := range order {
		for _, id := range g.hits { // a point of two groups is read once
			if !seen[id] {
				seen[id] = true
				ids, hitScores = append(ids, id), append(hitScores, scores[id])
			}
		}
	}
	recs, err := scoredRecords(c, ids, hitScores, sel, withVector)
	if err != nil {
		return groupsResult{}, err
	}
	byID := make(map[collection.ID]record, len(recs))
	for _, r := range recs {
		byID[r.ID.ID] = r
	}
	out := groupsResult{Groups: make([]pointGroup, 0, len(order))}
	for _, g := range order {
		pg := pointGroup{ID: g.key.json(), Hits: make([]record, 0, len(g.hits))}
		for _, id := range g.hits {
			if r, ok := byID[id]; ok { // deleted meanwhile: left out
				pg.Hits = append(pg.Hits, r)
			}
		}
		if lookup != nil {
			if pg.Lookup, err = lookup.find(g.key); err != nil {
				return groupsResult{}, err
			}
		}
		out.Groups = append(out.Groups, pg)
	}
	return out, nil
}

// withLookup is Qdrant's WithLookupInterface resolved: the collection
// whose points are looked up by group value, and what of them to answer.
type withLookup struct {
	c          *collection.Collection
	sel        payloadSelector
	withVector bool
}

// parseWithLookup reads with_lookup: a collection name, or {collection,
// with_payload (default true), with_vectors (default false)}.
func (h *Handler) parseWithLookup(raw json.RawMessage) (*withLookup, error) {
	if !present(raw) {
		return nil, nil
	}
	var spec struct {
		Collection  string          `json:"collection"`
		WithPayload json.RawMessage `json:"with_payload"`
		WithVectors json.RawMessage `json:"with_vectors"`
	}
	if bytes.TrimSpace(raw)[0] == '"' {
		if err := json.Unmarshal(raw, &spec.Collection); err != nil {
			return nil, badRequestf("with_lookup: %v", err)
		}
	} else if err := strictUnmarshal(raw, &spec); err != nil {
		return nil, badRequestf("with_lookup: a collection name or {collection, with_payload, with_vectors}: %v", err)
	}
	c, err := h.named(spec.Collection)
	if err != nil {
		return nil, err
	}
	l := &withLookup{c: c}
	if l.sel, err = parsePayloadSelector(spec.WithPayload, true); err != nil {
		return nil, err
	}
	if l.withVector, err = parseWithVector(spec.WithVectors, false); err != nil {
		return nil, err
	}
	return l, nil
}

// find returns the point whose id is the group's value, nil when there
// is none (or the value cannot be a point id).
func (l *withLookup) find(key groupKey) (*record, error) {
	var id collection.ID
	if key.isNum {
		if key.num < 0 {
			return nil, nil
		}
		id = collection.IntID(uint64(key.num))
	} else {
		u, ok := canonicalUUID(key.str)
		if !ok {
			return nil, nil
		}
		id = collection.StringID(u)
	}
	recs, err := records(l.c, []collection.ID{id}, l.sel, l.withVector)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	return &recs[0], nil
}
