package qdrant

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
)

type orderBy struct {
	Key       string          `json:"key"`
	Direction string          `json:"direction"`
	StartFrom json.RawMessage `json:"start_from"`
}

// scrollRequest is Qdrant's ScrollRequest.
type scrollRequest struct {
	Offset      json.RawMessage `json:"offset"`
	Limit       *int            `json:"limit"`
	Filter      json.RawMessage `json:"filter"`
	WithPayload json.RawMessage `json:"with_payload"`
	WithVector  json.RawMessage `json:"with_vector"`
	OrderBy     json.RawMessage `json:"order_by"`
	ShardKey    json.RawMessage `json:"shard_key"`
}

// scrollResponse is Qdrant's ScrollResult.
type scrollResponse struct {
	Points         []record `json:"points"`
	NextPageOffset *pointID `json:"next_page_offset"`
}

// scroll is scroll: a page of points in id order (or order_by's).
func (h *Handler) scroll(_ context.Context, name string, req *scrollRequest) (scrollResponse, error) {
	c, err := h.named(name)
	if err != nil {
		return scrollResponse{}, err
	}
	limit := 10
	if req.Limit != nil {
		limit = *req.Limit
	}
	if limit < 0 || limit > h.limits.MaxK {
		return scrollResponse{}, badRequestf("limit must be in [0, %d], got %d (the server's limit: strata-server --max-k)", h.limits.MaxK, limit)
	}
	sel, err := parsePayloadSelector(req.WithPayload, true)
	if err != nil {
		return scrollResponse{}, err
	}
	withVector, err := parseWithVector(req.WithVector, false)
	if err != nil {
		return scrollResponse{}, err
	}
	if err := h.limits.Answer(limit, c.Options().Dim, withVector); err != nil {
		return scrollResponse{}, err
	}
	p, err := compileFilter(req.Filter)
	if err != nil {
		return scrollResponse{}, err
	}
	if present(req.OrderBy) {
		if present(req.Offset) {
			return scrollResponse{}, badRequestf("offset cannot be used with order_by (use order_by.start_from)")
		}
		ob, err := parseOrderBy(req.OrderBy, "order_by")
		if err != nil {
			return scrollResponse{}, err
		}
		points, err := ordered(c, p, ob, limit, sel, withVector)
		if err != nil {
			return scrollResponse{}, err
		}
		return scrollResponse{Points: points}, nil
	}
	ids, err := scanFrom(c, p, req.Offset, limit+1)
	if err != nil {
		return scrollResponse{}, err
	}
	var next *pointID
	if len(ids) > limit {
		next, ids = &pointID{ids[limit]}, ids[:limit]
	}
	points, err := records(c, ids, sel, withVector)
	if err != nil {
		return scrollResponse{}, err
	}
	return scrollResponse{Points: points, NextPageOffset: next}, nil
}

// scanFrom returns up to limit ids matching p in Qdrant's scroll order
// (integers, then UUIDs), from the id offset on (inclusive) if present.
func scanFrom(c *collection.Collection, p *meta.Filter, offset json.RawMessage, limit int) ([]collection.ID, error) {
	if !present(offset) {
		return c.ScanIDs(p, collection.ID{}, false, limit)
	}
	from, err := parseID(offset)
	if err != nil {
		return nil, err
	}
	// ScanIDs' after is exclusive: an integer offset starts after its
	// predecessor; a UUID, which has none, is looked up itself first.
	if !from.IsString() {
		return c.ScanIDs(p, collection.IntID(from.Int()-1), from.Int() > 0, limit)
	}
	var ids []collection.ID
	if n, err := c.Count(meta.And(p, meta.IDs(nil, []string{from.Str()}))); err != nil {
		return nil, err
	} else if n == 1 {
		ids = append(ids, from)
	}
	if limit > 0 && len(ids) == limit {
		return ids, nil
	}
	rest, err := c.ScanIDs(p, from, true, max(limit-len(ids), 0))
	if err != nil {
		return nil, err
	}
	return append(ids, rest...), nil
}

type orderedPoint struct {
	id    collection.ID
	value meta.OrderValue
}

// startFrom reads order_by.start_from: a number, or a datetime string.
func (ob orderBy) startFrom() (*meta.OrderValue, error) {
	raw := bytes.TrimSpace(ob.StartFrom)
	if !present(raw) {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, badRequestf("order_by.start_from: %v", err)
		}
		v, err := meta.ParseOrderValue(s)
		if err != nil {
			return nil, badRequestf("order_by.start_from: %q is not a datetime", truncate(s))
		}
		return &v, nil
	}
	var x float64
	if err := json.Unmarshal(raw, &x); err != nil {
		return nil, badRequestf("order_by.start_from: a number or a datetime string, got %s", truncate(string(raw)))
	}
	return &meta.OrderValue{Number: x}, nil
}

// parseOrderBy reads an order_by: a key, or {key, direction, start_from}.
func parseOrderBy(raw json.RawMessage, at string) (orderBy, error) {
	var ob orderBy
	var err error
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		err = json.Unmarshal(raw, &ob.Key)
	} else {
		err = strictUnmarshal(raw, &ob)
	}
	if err != nil {
		return ob, badRequestf("%s: a key or {key, direction, start_from}: %v", at, err)
	}
	return ob, nil
}

// ordered answers a scroll with order_by as Qdrant does: each matching
// point once per number or datetime at the key (a list gives several),
// by that value (then by id), from start_from on; a datetime's
// order_value is its microseconds since the epoch.
func ordered(c *collection.Collection, p *meta.Filter, ob orderBy, limit int, sel payloadSelector, withVector bool) ([]record, error) {
	pts, err := orderedPoints(c, p, ob, limit)
	if err != nil {
		return nil, err
	}
	out := make([]record, 0, len(pts))
	for _, pt := range pts {
		recs, err := records(c, []collection.ID{pt.id}, sel, withVector)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			if pt.value.IsTime {
				rec.OrderValue = pt.value.Micros
			} else {
				rec.OrderValue = pt.value.Number
			}
			out = append(out, rec)
		}
	}
	return out, nil
}

// orderedPoints is ordered's list of (point, value), at most limit.
func orderedPoints(c *collection.Collection, p *meta.Filter, ob orderBy, limit int) ([]orderedPoint, error) {
	path, err := checkKey(ob.Key, "order_by.key")
	if err != nil {
		return nil, err
	}
	desc := false
	switch ob.Direction {
	case "", "asc":
	case "desc":
		desc = true
	default:
		return nil, badRequestf("order_by.direction must be \"asc\" or \"desc\", got %q", ob.Direction)
	}
	from, err := ob.startFrom()
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
	var pts []orderedPoint
	for i, raw := range docs {
		if raw == nil {
			continue
		}
		doc, err := meta.ReadDocument(raw)
		if err != nil {
			return nil, fmt.Errorf("qdrant: stored payload of point %v: %w", pointID{ids[i]}, err)
		}
		values := doc.OrderValues(path)
		for j, v := range values {
			if from != nil {
				if c := meta.CompareOrderValues(v, *from); (!desc && c < 0) || (desc && c > 0) {
					continue
				}
			}
			if slices.ContainsFunc(values[:j], func(w meta.OrderValue) bool { return w == v }) {
				continue // one point, one value: listed once
			}
			pts = append(pts, orderedPoint{ids[i], v})
		}
	}
	slices.SortFunc(pts, func(a, b orderedPoint) int {
		if c := meta.CompareOrderValues(a.value, b.value); c != 0 {
			if desc {
				return -c
			}
			return c
		}
		return collection.CompareIDs(a.id, b.id)
	})
	return pts[:min(limit, len(pts))], nil
}

// countRequest is Qdrant's CountRequest.
type countRequest struct {
	Filter   json.RawMessage `json:"filter"`
	Exact    *bool           `json:"exact"`
	ShardKey json.RawMessage `json:"shard_key"`
}

type countResponse struct {
	Count int `json:"count"`
}

// count is count: exact, whatever "exact" says.
func (h *Handler) count(_ context.Context, name string, req *countRequest) (countResponse, error) {
	c, err := h.named(name)
	if err != nil {
		return countResponse{}, err
	}
	p, err := compileFilter(req.Filter)
	if err != nil {
		return countResponse{}, err
	}
	n, err := c.Count(p)
	if err != nil {
		return countResponse{}, err
	}
	return countResponse{Count: n}, nil
}
