package qdrant

import (
	"encoding/json"

	"github.com/strata-db/strata/go/collection"
	"github.com/strata-db/strata/go/collection/meta"
)

// Conditional updates, as qdrant-client's local mode applies them: an
// upsert's update_filter leaves alone the points that exist and do not
// match it (new points are written whatever it says), its update_mode
// "insert_only" the points that exist, "update_only" those that do not
// ("upsert", the default, writes both); update_vectors' update_filter
// leaves alone the existing points it does not match. The filter is
// evaluated by meta's index against each point's stored payload, before
// the write: a concurrent write to the same point in between is not seen.
// Local mode applies a request's points one after another, so an id
// repeated in an insert_only upsert keeps its first value (the later ones
// find it inserted); with update_filter a repeated id is judged against
// the stored payload, not against its earlier value in the request (a
// known difference).

// firstOnly marks the first occurrence of each id for an insert_only
// upsert (nil otherwise: the last occurrence wins, as Qdrant's upsert).
func firstOnly(ids []collection.ID, updateMode *string) []bool {
	if updateMode == nil || *updateMode != "insert_only" {
		return nil
	}
	seen := make(map[collection.ID]bool, len(ids))
	first := make([]bool, len(ids))
	for i, id := range ids {
		first[i] = !seen[id]
		seen[id] = true
	}
	return first
}

// writable reports, for each of ids, whether the update may write it.
func writable(c *collection.Collection, ids []collection.ID, updateFilter json.RawMessage, updateMode *string) ([]bool, error) {
	mode := "upsert"
	if updateMode != nil {
		mode = *updateMode
	}
	switch mode {
	case "upsert", "insert_only", "update_only":
	default:
		return nil, badRequestf("update_mode %q: one of upsert, insert_only, update_only", mode)
	}
	keep := make([]bool, len(ids))
	if !present(updateFilter) && mode == "upsert" {
		for i := range keep {
			keep[i] = true
		}
		return keep, nil
	}
	f, err := compileFilter(updateFilter)
	if err != nil {
		return nil, err
	}
	these := idFilter(ids)
	existing, err := c.ScanIDs(these, collection.ID{}, false, 0)
	if err != nil {
		return nil, err
	}
	exists := make(map[collection.ID]bool, len(existing))
	for _, id := range existing {
		exists[id] = true
	}
	matches := exists
	if f != nil {
		matching, err := c.ScanIDs(meta.And(these, f), collection.ID{}, false, 0)
		if err != nil {
			return nil, err
		}
		matches = make(map[collection.ID]bool, len(matching))
		for _, id := range matching {
			matches[id] = true
		}
	}
	for i, id := range ids {
		switch {
		case !exists[id]:
			keep[i] = mode != "update_only"
		default:
			keep[i] = mode != "insert_only" && matches[id]
		}
	}
	return keep, nil
}

// keepDense keeps the rows of a dense upsert that keep marks.
func keepDense(keep []bool, ids []collection.ID, vectors []float32, docs []meta.Document, dim int) ([]collection.ID, []float32, []meta.Document) {
	n := 0
	for i := range ids {
		if keep[i] {
			ids[n], docs[n] = ids[i], docs[i]
			copy(vectors[n*dim:(n+1)*dim], vectors[i*dim:(i+1)*dim])
			n++
		}
	}
	return ids[:n], vectors[:n*dim], docs[:n]
}

// keepNamed keeps the points of an upsert of named fields that keep marks.
func keepNamed(keep []bool, ids []collection.ID, points []map[string]pointValue, docs []meta.Document) ([]collection.ID, []map[string]pointValue, []meta.Document) {
	n := 0
	for i := range ids {
		if keep[i] {
			ids[n], points[n], docs[n] = ids[i], points[i], docs[i]
			n++
		}
	}
	return ids[:n], points[:n], docs[:n]
}

// keepExpiries keeps the expiries (strata_ttl, strata_expires_at) of the
// points keep marks; none stay none.
func keepExpiries(keep []bool, exps []pointExpiry) []pointExpiry {
	if exps == nil {
		return nil
	}
	out := exps[:0:0]
	for i, e := range exps {
		if keep[i] {
			out = append(out, e)
		}
	}
	return out
}
