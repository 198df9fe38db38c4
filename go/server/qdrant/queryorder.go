package qdrant

import (
	"bytes"
	"encoding/json"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
)

// The universal query's {"order_by": key | {key, direction, start_from}}:
// the points the level's filter allows (and, under prefetches, only the
// prefetched ones), in the order a scroll with that order_by gives them
// (scroll.go: numbers and datetimes, a point once per value), each with
// score unscored (1.0) and its order_value, as qdrant-client's local mode
// answers it.
// At the top level, offset skips the first points of that order.

// orderByOf reads a query {"order_by": ...}; isOrder is false for any
// other query.
func orderByOf(raw json.RawMessage) (ob orderBy, isOrder bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return ob, false, nil
	}
	q, err := objectFields(raw)
	if err != nil {
		return ob, false, nil
	}
	body, ok := q["order_by"]
	if !ok {
		return ob, false, nil
	}
	if len(q) != 1 {
		return ob, true, badRequestf("query: {\"order_by\": ...} takes no other key, got %s", truncate(string(raw)))
	}
	ob, err = parseOrderBy(body, "query.order_by")
	return ob, true, err
}

// orderedQuery answers a top-level order_by query: limit points after
// offset, unscored.
func orderedQuery(c *collection.Collection, ob orderBy, p *meta.Filter, limit, offset int, sel payloadSelector, withVector bool) ([]record, error) {
	recs, err := ordered(c, p, ob, limit+offset, sel, withVector)
	if err != nil {
		return nil, err
	}
	recs = recs[min(offset, len(recs)):]
	for i := range recs {
		score := unscored
		recs[i].Score, recs[i].Version = &score, new(uint64)
	}
	return recs, nil
}

// orderedLevel answers an order_by query inside a prefetch tree: the
// ordered points of f, among the prefetched ones when among is not nil,
// unscored.
func orderedLevel(c *collection.Collection, ob orderBy, f *meta.Filter, among []collection.ID, limit int) ([]collection.Scored, error) {
	if among != nil {
		if len(among) == 0 {
			return []collection.Scored{}, nil
		}
		if f == nil {
			f = idFilter(among)
		} else {
			f = meta.And(f, idFilter(among))
		}
	}
	pts, err := orderedPoints(c, f, ob, limit)
	if err != nil {
		return nil, err
	}
	out := make([]collection.Scored, len(pts))
	for i, pt := range pts {
		out[i] = collection.Scored{ID: pt.id, Score: unscored}
	}
	return out, nil
}
