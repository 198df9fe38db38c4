package qdrant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
)

type orderBy struct {
	Key       string   `json:"key"`
	Direction string   `json:"direction"`
	StartFrom *float64 `json:"start_from"`
}

func (h *Handler) scroll(r *http.Request) (any, error) {
	c, err := h.collection(r)
	if err != nil {
		return nil, err
	}
	var req struct {
		Offset      json.RawMessage `json:"offset"`
		Limit       *int            `json:"limit"`
		Filter      json.RawMessage `json:"filter"`
		WithPayload json.RawMessage `json:"with_payload"`
		WithVector  json.RawMessage `json:"with_vector"`
		OrderBy     json.RawMessage `json:"order_by"`
		ShardKey    json.RawMessage `json:"shard_key"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	limit := 10
	if req.Limit != nil {
		limit = *req.Limit
	}
	if limit < 0 || limit > h.limits.MaxK {
		return nil, badRequestf("limit must be in [0, %d], got %d (the server's limit: strata-server --max-k)", h.limits.MaxK, limit)
	}
	sel, err := parsePayloadSelector(req.WithPayload, true)
	if err != nil {
		return nil, err
	}
	withVector, err := parseWithVector(req.WithVector, false)
	if err != nil {
		return nil, err
	}
	if err := h.limits.Answer(limit, c.Options().Dim, withVector); err != nil {
		return nil, err
	}
	p, err := compileFilter(req.Filter)
	if err != nil {
		return nil, err
	}
	if present(req.OrderBy) {
		if present(req.Offset) {
			return nil, badRequestf("offset cannot be used with order_by (use order_by.start_from)")
		}
		var ob orderBy
		raw := bytes.TrimSpace(req.OrderBy)
		if raw[0] == '"' {
			err = json.Unmarshal(raw, &ob.Key)
		} else {
			err = strictUnmarshal(raw, &ob)
		}
		if err != nil {
			return nil, badRequestf("order_by: a key or {key, direction, start_from}: %v", err)
		}
		points, err := ordered(c, p, ob, limit, sel, withVector)
		if err != nil {
			return nil, err
		}
		return map[string]any{"points": points, "next_page_offset": nil}, nil
	}
	ids, err := scanFrom(c, p, req.Offset, limit+1)
	if err != nil {
		return nil, err
	}
	var next any
	if len(ids) > limit {
		next, ids = pointID{ids[limit]}, ids[:limit]
	}
	points, err := records(c, ids, sel, withVector)
	if err != nil {
		return nil, err
	}
	return map[string]any{"points": points, "next_page_offset": next}, nil
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
	value float64
}

// ordered answers a scroll with order_by: the matching points that hold
// a number at the key, by that number (then by id), from start_from on.
func ordered(c *collection.Collection, p *meta.Filter, ob orderBy, limit int, sel payloadSelector, withVector bool) ([]record, error) {
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
		x, ok, isList := doc.NumberAt(path)
		if isList {
			return nil, unsupportedf("order_by over a list value (point %v, key %q)", pointID{ids[i]}, ob.Key)
		}
		if !ok {
			continue // not a number: not in Qdrant's numeric index either
		}
		if s := ob.StartFrom; s != nil && ((!desc && x < *s) || (desc && x > *s)) {
			continue
		}
		pts = append(pts, orderedPoint{ids[i], x})
	}
	slices.SortFunc(pts, func(a, b orderedPoint) int {
		if a.value != b.value {
			if (a.value < b.value) != desc {
				return -1
			}
			return 1
		}
		return collection.CompareIDs(a.id, b.id)
	})
	pts = pts[:min(limit, len(pts))]
	out := make([]record, 0, len(pts))
	for _, pt := range pts {
		recs, err := records(c, []collection.ID{pt.id}, sel, withVector)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			v := pt.value
			rec.OrderValue = &v
			out = append(out, rec)
		}
	}
	return out, nil
}

func (h *Handler) count(r *http.Request) (any, error) {
	c, err := h.collection(r)
	if err != nil {
		return nil, err
	}
	var req struct {
		Filter   json.RawMessage `json:"filter"`
		Exact    *bool           `json:"exact"`
		ShardKey json.RawMessage `json:"shard_key"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	p, err := compileFilter(req.Filter)
	if err != nil {
		return nil, err
	}
	n, err := c.Count(p)
	if err != nil {
		return nil, err
	}
	return map[string]int{"count": n}, nil
}
