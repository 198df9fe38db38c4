package collection

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/strata-db/strata/go/collection/segment"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
)

// Reads over a field's graph and its tail (package segment).
//
// Every read of a field takes a view of its tail first and holds it to the
// end, so the builder cannot move rows from the tail into the graph under
// it. A key the view holds a row of is the tail's to answer (its newest
// value, or none after a tombstone): the graph's version of it, stale or
// the same, is never returned. Every other key is the graph's.

// maxHiddenExtra is how many hidden keys a search makes up for by asking
// the graph for more results; beyond it the graph is told to deny them.
const maxHiddenExtra = 256

type searchScratch struct {
	query  []float32
	keys   []int64
	dists  []float32
	hits   []segment.Hit
	deny   []uint64
	filter hnsw.Filter
}

var searchPool = sync.Pool{New: func() any { return new(searchScratch) }}

// allowFunc turns an allow list (nil: all) into a membership test.
func allowFunc(allow []uint64) func(uint64) bool {
	if allow == nil {
		return nil
	}
	if !slices.IsSorted(allow) {
		allow = slices.Sorted(slices.Values(allow))
	}
	return func(k uint64) bool { _, ok := slices.BinarySearch(allow, k); return ok }
}

// search answers nq queries (rows of f.Dim floats) of the dense field f
// with the k nearest keys among allow (nil: all) that are not expired
// (expiredSet: the keys expired when the read began, given with allow nil
// only), into outKeys and outDists (nq·k, padded with -1 and +Inf): the
// graph searched at ef, the tail scanned exactly with the same distance,
// the two merged. The graph is asked for as many more results as the
// tail hides and expired keys (up to maxHiddenExtra; beyond, it is told
// to deny them), so that neither costs a pass over every point.
func (f *vectorField) search(queries []float32, k, ef, threads int, allow []uint64, expired expiredSet,
	outKeys []int64, outDists []float32) (hnsw.SearchStats, error) {
	v := f.tail.Read()
	defer v.Close()
	var filter *hnsw.Filter
	if allow != nil {
		filter = &hnsw.Filter{Allow: allow}
	}
	if v.Len() == 0 && expired.empty() {
		return f.index.SearchFiltered(queries, k, ef, threads, filter, outKeys, outDists)
	}
	dim := f.Dim
	nq := len(queries) / dim
	hidden := v.Extra() + len(expired.keys)
	kg := k + hidden
	denied := hidden > maxHiddenExtra || kg > limits.MaxK
	s := searchPool.Get().(*searchScratch)
	defer searchPool.Put(s)
	if denied {
		// In the pooled scratch: while writes overwrite points, the tail
		// hides more keys than maxHiddenExtra and every query lists them
		// (a fresh list per query was over half the bytes a 30 %
		// overwrite allocated, TestSegmentBenchOverwrite at 100k).
		s.deny = s.deny[:0]
		v.Keys(func(key uint64, _ bool) { s.deny = append(s.deny, key) })
		s.deny = append(s.deny, expired.keys...)
		s.filter = hnsw.Filter{Allow: allow, Deny: s.deny}
		filter = &s.filter
		kg = k
	}
	s.keys = slices.Grow(s.keys[:0], nq*kg)[:nq*kg]
	s.dists = slices.Grow(s.dists[:0], nq*kg)[:nq*kg]
	changes := f.index.Changes()
	stats, err := f.index.SearchFiltered(queries, kg, max(ef, kg), threads, filter, s.keys, s.dists)
	if err != nil {
		return stats, err
	}
	allowed := allowFunc(allow)
	if !expired.empty() { // allow is nil
		allowed = func(key uint64) bool { return !expired.has(key) }
	}
	// The graph counted the allowed points it holds; the tail's keys
	// decide for themselves (the graph's version of them is hidden).
	total := stats.Allowed
	if allow != nil {
		total = f.allowedCount(&v, allow, allowed, stats.Allowed, denied, changes)
	} else {
		v.Keys(func(key uint64, live bool) {
			if !denied && f.index.Contains(key) {
				total--
			}
			if live && !expired.has(key) {
				total++
			}
		})
		if !denied {
			for _, key := range expired.keys {
				if _, inTail := v.Lookup(key); !inTail && f.index.Contains(key) {
					total-- // counted by the graph, hidden by its expiry
				}
			}
		}
	}
	stats.Merge(tailPart(&v, nq, total-stats.Allowed, total > 0))
	s.query = slices.Grow(s.query[:0], dim)[:dim]
	for q := range nq {
		copy(s.query, queries[q*dim:(q+1)*dim])
		if f.Metric.NeedsNormalize() {
			metric.Normalize(s.query)
		}
		s.hits = v.Scan(s.query, k, allowed, f.codeDistance(s.query), s.hits)
		graphKeys, graphDists := s.keys[q*kg:(q+1)*kg], s.dists[q*kg:(q+1)*kg]
		out, outD := outKeys[q*k:(q+1)*k], outDists[q*k:(q+1)*k]
		g, t, w := 0, 0, 0
		for w < k {
			for g < kg && graphKeys[g] != -1 && (v.Hides(uint64(graphKeys[g])) || expired.has(uint64(graphKeys[g]))) {
				g++
			}
			haveG := g < kg && graphKeys[g] != -1
			haveT := t < len(s.hits)
			switch {
			case haveG && (!haveT || graphDists[g] < s.hits[t].Dist ||
				(graphDists[g] == s.hits[t].Dist && uint64(graphKeys[g]) < s.hits[t].Key)):
				out[w], outD[w] = graphKeys[g], graphDists[g]
				g++
			case haveT:
				out[w], outD[w] = int64(s.hits[t].Key), s.hits[t].Dist
				t++
			default:
				out[w], outD[w] = -1, float32(math.Inf(1))
			}
			w++
		}
	}
	return stats, nil
}

// tailPart is the stats of the exact scan of the view's rows for nq
// queries, to merge with the graph segments' (hnsw.SearchStats.Merge):
// allowed is the count it adds to the graphs' (the tail's allowed rows
// less the graphs' rows they hide), and it is an exact plan when it has
// rows and the search allowed any point (the graphs' plan wins unless
// they had nothing to search), so that the plan does not depend on
// whether the builder has moved the rows yet.
func tailPart(v *segment.View, nq, allowed int, anyAllowed bool) hnsw.SearchStats {
	part := hnsw.SearchStats{Plan: hnsw.PlanEmpty, Allowed: allowed, DistanceComputations: int64(nq * v.Len())}
	if v.Len() > 0 && anyAllowed {
		part.Plan = hnsw.PlanExact
	}
	return part
}

// allowedCount is how many keys of allow (sorted; allowed tests it) have
// a value in the field, given the graph's count of the allowed keys it
// held during the search (inGraph; the tail's keys excluded when denied)
// and the graph's Changes before it. It corrects the graph's count by the
// tail view's keys, O(tail keys), when no key came or went in the graph
// since before the search; a key the builder moved meanwhile would drift
// that count, so then it counts each allowed key once, O(len(allow)).
func (f *vectorField) allowedCount(v *segment.View, allow []uint64, allowed func(uint64) bool, inGraph int,
	denied bool, changes uint64) int {
	if changes%2 == 0 {
		n := inGraph
		v.Keys(func(key uint64, live bool) {
			if !allowed(key) {
				return
			}
			if !denied && f.index.Contains(key) {
				n--
			}
			if live {
				n++
			}
		})
		if f.index.Changes() == changes {
			return n
		}
	}
	n := 0
	for _, key := range allow {
		if f.holds(v, key) {
			n++
		}
	}
	return n
}

// getVectors copies the vectors of labels (keys of a dense field) into out
// (len(labels)·Dim), from the view's tail rows or else the graph; a label
// without a value fails with hnsw.ErrNotFound.
func (f *vectorField) getVectors(v *segment.View, labels []uint64, out []float32) error {
	dim := f.Dim
	var rest []uint64
	var at []int
	for i, l := range labels {
		vec, found := v.Lookup(l)
		switch {
		case found && vec == nil:
			return fmt.Errorf("%w: ids[%d] = %d", hnsw.ErrNotFound, i, l)
		case found:
			f.asStored(vec, out[i*dim:(i+1)*dim])
		default:
			rest, at = append(rest, l), append(at, i)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	if len(rest) == len(labels) {
		return f.index.GetVectors(labels, out)
	}
	buf := make([]float32, len(rest)*dim)
	if err := f.index.GetVectors(rest, buf); err != nil {
		return err
	}
	for j, i := range at {
		copy(out[i*dim:(i+1)*dim], buf[j*dim:(j+1)*dim])
	}
	return nil
}

// holds reports whether the dense field has a value of key in the view.
func (f *vectorField) holds(v *segment.View, key uint64) bool {
	if vec, found := v.Lookup(key); found {
		return vec != nil
	}
	return f.index.Contains(key)
}

// sortScored orders MAX_SIM candidates nearest first, ties by id.
func sortScored(s []scoredPoint) {
	slices.SortFunc(s, func(a, b scoredPoint) int {
		if c := cmp.Compare(a.dist, b.dist); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
}

// codeDistance returns the distance of query to a float row as a
// quantized codes-only graph computes it (code to code), or nil for a
// graph that answers float distances (a float one, an SQ8 one that
// re-scores with its floats, one not trained yet): so that a row ranks
// the same in the tail as once it is built.
func (f *vectorField) codeDistance(query []float32) func([]float32) float32 {
	q := f.index.Quantizer()
	if q == nil || f.rescores() {
		return nil
	}
	qcode, row := make([]uint8, len(query)), make([]uint8, len(query))
	qshare := q.Encode(query, qcode)
	if f.Metric == metric.L2 {
		return func(v []float32) float32 { q.Encode(v, row); return q.L2(qcode, row) }
	}
	return func(v []float32) float32 { share := q.Encode(v, row); return 1 - q.Dot(qcode, qshare, row, share) }
}

// asStored returns the tail's float row as the graph would return it: its
// SQ8 reconstruction for a codes-only field (once trained), else itself.
func (f *vectorField) asStored(vec, out []float32) {
	q := f.index.Quantizer()
	if q == nil || f.rescores() {
		copy(out, vec)
		return
	}
	code := make([]uint8, len(vec))
	q.Encode(vec, code)
	q.Decode(code, out)
}
