package hnsw

import (
	"fmt"
	"sync/atomic"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/metric"
)

// SearchStats counts the work of a Search call.
type SearchStats struct {
	// DistanceComputations is the number of vector distances computed,
	// summed over all queries of the call.
	DistanceComputations int64
}

// Search finds the k nearest live vectors to each of len(queries)/Dim
// queries. Results go to outIDs and outDists (row-major, nq×k, nearest
// first); rows with fewer than k results are padded with id -1 and
// distance +Inf. ef is the size of the level-0 candidate list (ef <= 0:
// max(k, 64); raised to k if smaller). threads <= 0 uses every core.
func (x *Index) Search(queries []float32, k, ef, threads int, outIDs []int64, outDists []float32) error {
	_, err := x.SearchWithStats(queries, k, ef, threads, outIDs, outDists)
	return err
}

// SearchWithStats is Search that also reports how much work it did.
func (x *Index) SearchWithStats(queries []float32, k, ef, threads int, outIDs []int64, outDists []float32) (SearchStats, error) {
	var stats SearchStats
	nq, err := batch.CheckSearch(queries, x.cfg.Dim, k, outIDs, outDists)
	if err != nil {
		return stats, fmt.Errorf("hnsw: %w", err)
	}
	if ef <= 0 {
		ef = max(k, DefaultEfSearch)
	}
	ef = max(ef, k)
	g := x.graph.Load()
	if nq == 1 || threads == 1 {
		adm := admission{readyOnly: true}
		s := x.getSearcher()
		s.ndis = 0
		for i := 0; i < nq; i++ {
			x.searchOne(g, s, queries, i, k, ef, &adm, outIDs, outDists)
		}
		stats.DistanceComputations = s.ndis
		x.putSearcher(s)
		return stats, nil
	}
	adm := &admission{readyOnly: true}
	var total atomic.Int64
	x.parallel(nq, threads, func(s *searcher, i int) {
		before := s.ndis
		x.searchOne(g, s, queries, i, k, ef, adm, outIDs, outDists)
		total.Add(s.ndis - before)
	})
	stats.DistanceComputations = total.Load()
	return stats, nil
}

// searchOne answers query qi, writing row qi of the outputs.
func (x *Index) searchOne(g *graph, s *searcher, queries []float32, qi, k, ef int, adm *admission, outIDs []int64, outDists []float32) {
	dim := x.cfg.Dim
	q := queries[qi*dim : (qi+1)*dim]
	if x.cfg.Metric.NeedsNormalize() {
		s.query = append(s.query[:0], q...)
		metric.Normalize(s.query)
		q = s.query
	}
	ids := outIDs[qi*k : (qi+1)*k]
	dists := outDists[qi*k : (qi+1)*k]
	found := x.searchNode(g, s, q, k, ef, adm)
	for i, c := range found {
		ids[i] = int64(g.labels[c.node])
		dists[i] = c.dist
	}
	for i := len(found); i < k; i++ {
		ids[i] = -1
		dists[i] = inf
	}
}

// searchNode returns up to k admitted nodes nearest to q, nearest first.
// The result aliases the searcher's scratch.
func (x *Index) searchNode(g *graph, s *searcher, q []float32, k, ef int, adm *admission) []candidate {
	e := g.entry.Load()
	if e == noEntry {
		return nil
	}
	top, ep := unpackEntry(e)
	cur := candidate{s.dist(g, x.l2, q, ep), ep}
	for l := top; l > 0; l-- {
		cur = s.greedy(g, x.l2, q, cur, l)
	}
	s.searchLayer(g, x.l2, q, cur, ef, 0, adm)
	for len(s.results) > k {
		s.results.pop()
	}
	sortAscending(s.results)
	return s.results
}
