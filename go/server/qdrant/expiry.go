package qdrant

import (
	"math"

	"github.com/strata-db/strata/go/collection"
)

// Expiring points are strata's extension of Qdrant's upsert: a point's
// "strata_ttl" (seconds from now) or "strata_expires_at" (Unix seconds),
// and in a batch the lists "strata_ttl" / "strata_expires_at" (one value
// or null per point). Qdrant has no such fields and its clients never send
// them; a Qdrant server would refuse them, so a client that sends them
// means strata. The engine checks the values (collection.Expiry).

// pointExpiry is one point's extension fields, as written.
type pointExpiry struct{ ttl, at *float64 }

// expiryOf turns the kept points' extension fields into the engine's
// Expiry: nil pointers are NaN (never); one request uses one of the two.
func expiryOf(points []pointExpiry) (collection.Expiry, error) {
	var hasTTL, hasAt bool
	for _, p := range points {
		hasTTL, hasAt = hasTTL || p.ttl != nil, hasAt || p.at != nil
	}
	switch {
	case hasTTL && hasAt:
		return collection.Expiry{}, badRequestf("strata_ttl and strata_expires_at: give one of them in one upsert, not both")
	case !hasTTL && !hasAt:
		return collection.Expiry{}, nil
	}
	values := make([]float64, len(points))
	for i, p := range points {
		v := p.at
		if hasTTL {
			v = p.ttl
		}
		values[i] = math.NaN()
		if v != nil {
			values[i] = *v
		}
	}
	if hasTTL {
		return collection.Expiry{TTL: values}, nil
	}
	return collection.Expiry{At: values}, nil
}

// batchExpiry reads a batch's extension lists for n points.
func (b *upsertBatch) expiry(n int) ([]pointExpiry, error) {
	if b.StrataTTL == nil && b.StrataExpiresAt == nil {
		return nil, nil
	}
	if (b.StrataTTL != nil && len(b.StrataTTL) != n) || (b.StrataExpiresAt != nil && len(b.StrataExpiresAt) != n) {
		return nil, badRequestf("batch holds %d ids, %d strata_ttl and %d strata_expires_at values", n, len(b.StrataTTL), len(b.StrataExpiresAt))
	}
	out := make([]pointExpiry, n)
	for i := range out {
		if b.StrataTTL != nil {
			out[i].ttl = b.StrataTTL[i]
		}
		if b.StrataExpiresAt != nil {
			out[i].at = b.StrataExpiresAt[i]
		}
	}
	return out, nil
}

// keepLast returns the extension fields of the points lastOfEachID (or
// upsertNamed) keeps: the last of each id, in order.
func keepLast(ids []collection.ID, exps []pointExpiry) []pointExpiry {
	if exps == nil {
		return nil
	}
	last := make(map[collection.ID]int, len(ids))
	for i, id := range ids {
		last[id] = i
	}
	out := exps[:0:0]
	for i, id := range ids {
		if last[id] == i {
			out = append(out, exps[i])
		}
	}
	return out
}
