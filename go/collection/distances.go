package collection

import (
	"errors"
	"fmt"
	"slices"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
)

// MaxExamples bounds the example vectors of one DistancesTo call: each
// costs one exact pass over the allowed points.
const MaxExamples = 256

// DistancesTo measures every point that has a value in the named field
// and that f (nil: all) and among (as QueryAmong) allow against each of
// the example values, exactly: no index, every allowed point. It is the
// primitive under scores that are not a distance to one query
// (recommendation by best score, discovery, context): the caller combines
// the distances as it needs.
//
// examples holds the example values one after the other, as rows of the
// field's Dim floats: one row each for a dense field; for a multivector
// field example i has counts[i] rows (counts is nil for a dense field).
// The answer holds the points in ascending internal order and, for point
// p and example e, dists[p·len(examples)+e]: the field's distance (1 − cos
// with both sides normalised for Cosine, 1 − dot for Dot, squared L2), for
// a multivector field the MAX_SIM distance of the example as a query
// (maxsim.go). A point replaced or deleted during the call is left out.
func (c *Collection) DistancesTo(field string, examples []float32, counts []int, f *meta.Filter, among []ID) (ids []ID, dists []float32, err error) {
	if err := c.alive(); err != nil {
		return nil, nil, err
	}
	vf := c.fields.Load().get(field)
	if vf == nil {
		return nil, nil, fmt.Errorf("%w: no vector field %q", ErrInvalid, field)
	}
	rows, err := exampleRows(vf, examples, counts)
	if err != nil {
		return nil, nil, err
	}
	queries := slices.Clone(examples)
	if vf.Metric.NeedsNormalize() {
		for i := range len(queries) / vf.Dim {
			metric.Normalize(queries[i*vf.Dim : (i+1)*vf.Dim])
		}
	}
	sc, err := c.scope(f, among)
	if err != nil {
		return nil, nil, err
	}
	keys := vf.points()
	if sc.allow != nil {
		keys = intersectSorted(keys, sc.allow)
	}
	keys = sc.expired.without(keys)
	// points took and let go of its own view: a second read lock held
	// across it could deadlock behind a waiting writer.
	view := vf.tail.Read() // a point's newest vector may be in the tail
	defer view.Close()
	n := len(rows)
	var labels []uint64
	var values []float32
	for _, key := range keys {
		labels = labels[:0]
		if vf.multi != nil {
			vf.multi.mu.RLock()
			labels = append(labels, vf.multi.labels[key]...)
			vf.multi.mu.RUnlock()
		} else {
			labels = append(labels, key)
		}
		if len(labels) == 0 {
			continue
		}
		values = slices.Grow(values[:0], len(labels)*vf.Dim)[:len(labels)*vf.Dim]
		if err := vf.getVectors(&view, labels, values); err != nil {
			if errors.Is(err, hnsw.ErrNotFound) {
				continue
			}
			return nil, nil, fmt.Errorf("collection: %w", err)
		}
		id, ok := c.idOf(key)
		if !ok {
			continue
		}
		at := len(dists)
		dists = append(dists, make([]float32, n)...)
		for e, r := range rows {
			q := queries[r[0]*vf.Dim : r[1]*vf.Dim]
			if vf.multi != nil {
				dists[at+e] = maxSimDistance(vf.Metric, q, r[1]-r[0], values, len(labels), vf.Dim)
			} else {
				dists[at+e] = vf.Metric.Distance(q, values)
			}
		}
		ids = append(ids, id)
	}
	return ids, dists, nil
}

// exampleRows checks the examples' shape and returns each example's rows
// [first, end).
func exampleRows(vf *vectorField, examples []float32, counts []int) ([][2]int, error) {
	if len(examples)%vf.Dim != 0 {
		return nil, fmt.Errorf("%w: examples hold %d floats, not a multiple of the dimension %d", ErrInvalid, len(examples), vf.Dim)
	}
	if err := batch.CheckFinite(examples, vf.Dim, "example"); err != nil {
		return nil, fmt.Errorf("collection: %w", err)
	}
	total := len(examples) / vf.Dim
	if vf.multi == nil {
		if counts != nil {
			return nil, fmt.Errorf("%w: vector field %q is dense: its examples have one row each (counts must be nil)", ErrInvalid, vf.Name)
		}
		counts = make([]int, total)
		for i := range counts {
			counts[i] = 1
		}
	}
	if len(counts) > MaxExamples {
		return nil, fmt.Errorf("%w: %d examples, at most %d", ErrInvalid, len(counts), MaxExamples)
	}
	rows := make([][2]int, len(counts))
	at := 0
	for i, n := range counts {
		if err := limits.CheckMultivectors(n); err != nil {
			return nil, fmt.Errorf("%w: example %d: %w", ErrInvalid, i, err)
		}
		rows[i] = [2]int{at, at + n}
		at += n
	}
	if at != total {
		return nil, fmt.Errorf("%w: counts add up to %d rows, examples hold %d", ErrInvalid, at, total)
	}
	return rows, nil
}
