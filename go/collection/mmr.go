package collection

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/strata-db/strata/go/collection/meta"
	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
)

// Maximal marginal relevance (Carbonell and Goldstein, 1998).
//
// An MMR query answers k points that are near the query and far from one
// another. The field's index finds the FetchK nearest candidates (with
// the query's filter), then k of them are picked greedily: first the
// nearest, then each time the candidate d maximising
//
//	Lambda · sim(q, d) - (1 - Lambda) · max over picked s of sim(d, s)
//
// (ties to the nearer candidate). sim is the field's metric as a
// similarity: <a, b> for ip and cosine (vectors normalised), minus the
// squared Euclidean distance for l2. Lambda 1 is the nearest k in order;
// Lambda 0 only spreads. This is LangChain's maximal_marginal_relevance
// (langchain_core.vectorstores.utils) with the collection's metric in
// place of its fixed cosine, which is the same for cosine fields.
//
// The answer is in pick order (not by distance), each with its distance
// to the query. Fewer than k candidates answer fewer results, padded with
// NoID and +Inf.

// DefaultMMRFetchK is the candidates of an MMR query with FetchK 0 (when k
// is not larger): LangChain's default fetch_k.
const DefaultMMRFetchK = 20

// MMR is how an MMR query trades relevance for diversity.
type MMR struct {
	// Lambda in [0, 1] weighs relevance against diversity.
	Lambda float64
	// FetchK is how many candidates the index finds (k to limits.MaxK);
	// 0 is max(k, DefaultMMRFetchK).
	FetchK int
}

// mmrScratch is one MMR query's reusable buffers.
type mmrScratch struct {
	query      []float32
	ids        []ID
	dists      []float32
	keys       []uint64
	candidates []ID
	rows       []float32
	relevance  []float32
	redundant  []float32
	taken      []bool
}

var mmrPool = sync.Pool{New: func() any { return new(mmrScratch) }}

// QueryMMR answers one query (the field's Dim floats) of the dense field
// named field by maximal marginal relevance among the points f and among
// allow (as QueryField), writing k ids and distances into out (k each)
// in pick order. ef 0 uses max(FetchK, 64); it is widened to FetchK.
func (c *Collection) QueryMMR(field string, query []float32, k, ef int, mmr MMR, f *meta.Filter, among []ID, threads int,
	outIDs []ID, outDists []float32) (hnsw.SearchStats, error) {
	if err := c.alive(); err != nil {
		return hnsw.SearchStats{}, err
	}
	vf, err := c.queriedField(field, false)
	if err != nil {
		return hnsw.SearchStats{}, err
	}
	if err := limits.CheckK(k); err != nil {
		return hnsw.SearchStats{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(query) != vf.Dim {
		return hnsw.SearchStats{}, fmt.Errorf("%w: an MMR query is one vector of %d floats, got %d", ErrInvalid, vf.Dim, len(query))
	}
	if len(outIDs) != k || len(outDists) != k {
		return hnsw.SearchStats{}, fmt.Errorf("%w: outputs hold %d ids and %d distances, want %d each", ErrInvalid, len(outIDs), len(outDists), k)
	}
	if !(mmr.Lambda >= 0 && mmr.Lambda <= 1) { // NaN fails both
		return hnsw.SearchStats{}, fmt.Errorf("%w: MMR lambda must be in [0, 1], got %v", ErrInvalid, mmr.Lambda)
	}
	fetchK := mmr.FetchK
	if fetchK == 0 {
		fetchK = max(k, DefaultMMRFetchK)
	}
	if fetchK < k || fetchK > limits.MaxK {
		return hnsw.SearchStats{}, fmt.Errorf("%w: MMR fetch_k must be in [k, %d] (k = %d), got %d", ErrInvalid, limits.MaxK, k, mmr.FetchK)
	}
	if err := limits.CheckEf(ef); err != nil {
		return hnsw.SearchStats{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if ef != 0 {
		ef = max(ef, fetchK)
	}

	s := mmrPool.Get().(*mmrScratch)
	defer mmrPool.Put(s)
	s.ids = grow(s.ids, fetchK)
	s.dists = grow(s.dists, fetchK)
	stats, err := c.QueryField(field, query, fetchK, ef, f, among, threads, s.ids, s.dists)
	if err != nil {
		return stats, err
	}

	// The candidates' stored vectors; one deleted since the search drops out.
	dim := vf.Dim
	s.keys, s.candidates, s.rows = s.keys[:0], s.candidates[:0], s.rows[:0]
	view := vf.tail.Read() // a candidate's newest vector may be in the tail
	defer view.Close()
	for _, id := range s.ids {
		if id.IsNone() {
			break
		}
		key, ok := c.keyOf(id)
		if !ok {
			continue
		}
		at := len(s.rows)
		s.rows = append(s.rows, make([]float32, dim)...)
		if err := vf.getVectors(&view, []uint64{key}, s.rows[at:]); err != nil {
			s.rows = s.rows[:at]
			if errors.Is(err, hnsw.ErrNotFound) {
				continue
			}
			return stats, fmt.Errorf("collection: %w", err)
		}
		s.keys = append(s.keys, key)
		s.candidates = append(s.candidates, id) // rank order
	}
	n := len(s.keys)

	s.query = append(s.query[:0], query...)
	if vf.Metric.NeedsNormalize() {
		metric.Normalize(s.query)
	}
	s.relevance = grow(s.relevance, n)
	s.redundant = grow(s.redundant, n)
	s.taken = grow(s.taken, n)
	for i := range n {
		s.relevance[i] = similarity(vf.Metric, s.query, s.rows[i*dim:(i+1)*dim])
		s.redundant[i] = float32(math.Inf(-1))
		s.taken[i] = false
	}
	stats.DistanceComputations += int64(n)

	lambda := float32(mmr.Lambda)
	picks := min(k, n)
	for p := range picks {
		best, bestScore := -1, float32(math.Inf(-1))
		for i := range n {
			if s.taken[i] {
				continue
			}
			score := s.relevance[i]
			if p > 0 {
				score = lambda*s.relevance[i] - (1-lambda)*s.redundant[i]
			}
			if best < 0 || score > bestScore {
				best, bestScore = i, score
			}
		}
		s.taken[best] = true
		outIDs[p] = s.candidates[best]
		outDists[p] = distanceOf(vf.Metric, s.relevance[best])
		if p == picks-1 {
			break
		}
		picked := s.rows[best*dim : (best+1)*dim]
		for i := range n {
			if !s.taken[i] {
				s.redundant[i] = max(s.redundant[i], similarity(vf.Metric, s.rows[i*dim:(i+1)*dim], picked))
				stats.DistanceComputations++
			}
		}
	}
	for p := picks; p < k; p++ {
		outIDs[p], outDists[p] = NoID, float32(math.Inf(1))
	}
	return stats, nil
}

// similarity is the metric's distance turned into a similarity, larger
// nearer: <a, b> for ip and cosine (normalised), -|a - b|² for l2,
// -Σ|a - b| for l1.
func similarity(m metric.Metric, a, b []float32) float32 {
	switch m {
	case metric.L2:
		return -kernels.L2Squared(a, b)
	case metric.Manhattan:
		return -kernels.L1(a, b)
	}
	return kernels.Dot(a, b)
}

// distanceOf is the distance whose similarity is sim.
func distanceOf(m metric.Metric, sim float32) float32 {
	if m == metric.L2 || m == metric.Manhattan {
		return -sim
	}
	return 1 - sim
}

// grow returns s with length n, reusing its array when it is large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
