package hnsw

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/limits"
	"github.com/strata-db/strata/go/metric"
)

// SearchStats reports how a Search call was answered.
type SearchStats struct {
	// DistanceComputations is the number of vector distances computed,
	// summed over all queries of the call.
	DistanceComputations int64
	// Plan is how the call was answered (the same for every query).
	Plan Plan
	// Allowed is the number of live vectors the filter let through.
	Allowed int
	// EfSearch is the candidate list size used (ef, widened for filters).
	EfSearch int
	// LinksRead counts the level-0 link lists a filtered graph search
	// read, its own expansions and the nodes it passed through to a second
	// hop (searchAllowed), summed over all queries; 0 for other searches.
	LinksRead int64
	// Rerouted counts the queries a filtered graph search of the allowed
	// nodes left to its fallback (an exact scan of them or the routing
	// search, whichever costs less): their neighbourhood held almost none
	// (sparseNear), or the search reached fewer than k, kept finding none
	// within two hops (maxRouteSteps) or passed the fallback's cost.
	Rerouted int
	// Refinements counts, on RaBitQ codes (BuildRaBitQ), the candidates
	// whose 1-bit estimate was refined with an extended code or a float
	// vector, summed over all queries; DistanceComputations then counts
	// 1-bit estimates, refinements and the final float rescoring.
	Refinements int64
}

// Search finds the k nearest live vectors to each of len(queries)/Dim
// queries. Results go to outIDs and outDists (row-major, nq×k, nearest
// first, equal distances by ascending id); rows with fewer than k results are padded with id -1 and
// distance +Inf. ef is the size of the level-0 candidate list (ef 0:
// max(k, 64); raised to k if smaller; at most limits.MaxEf). threads <= 0 uses every core.
func (x *Index) Search(queries []float32, k, ef, threads int, outIDs []int64, outDists []float32) error {
	_, err := x.SearchFiltered(queries, k, ef, threads, nil, outIDs, outDists)
	return err
}

// SearchFiltered is Search restricted by filter (nil: no restriction) that
// also reports how it answered. A planner picks, once per call, between
// graph traversal and an exact scan of the allowed vectors.
func (x *Index) SearchFiltered(queries []float32, k, ef, threads int, filter *Filter, outIDs []int64, outDists []float32) (SearchStats, error) {
	if err := x.acquire(); err != nil {
		return SearchStats{}, err
	}
	defer x.closeMu.RUnlock()
	var stats SearchStats
	nq, err := batch.CheckSearch(queries, x.cfg.Dim, k, outIDs, outDists)
	if err != nil {
		return stats, fmt.Errorf("hnsw: %w", err)
	}
	if err := limits.CheckEf(ef); err != nil {
		return stats, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if ef <= 0 {
		ef = max(k, DefaultEfSearch)
	}
	ef = max(ef, k)
	g, allowed, held, selected, live := x.compileFilter(filter)
	defer releaseFilter(held)
	rq := x.codesOf(g)
	// RaBitQ traversals estimate every neighbour from its node's record
	// at once, so they route through the nodes a filter rejects
	// (rabitq_search.go); float and SQ8 graphs search the allowed nodes.
	routing := allowed != nil && (rq != nil || x.testing.routeFilter)
	rerouteEf := filteredEf(ef, selected, live, true)
	ef = filteredEf(ef, selected, live, routing)
	stats.Allowed, stats.EfSearch = selected, ef
	stats.Plan = x.choosePlan(g, selected, live, ef, routing)
	q := query{g: g, k: k, ef: ef, rerouteEf: rerouteEf, plan: stats.Plan, adm: admission{readyOnly: true, allow: allowed}, rq: rq}
	if allowed != nil && !routing && stats.Plan == PlanGraph {
		q.fallback = routeOrScan(g, selected, rerouteEf)
		q.allowedFraction = float64(selected) / float64(max(live, 1))
		q.fallbackWork = fallbackWork(g, q.fallback, selected, rerouteEf)
	}
	if !g.floats && g.sq == nil && q.rq == nil && g.entry.Load() != noEntry {
		return stats, fmt.Errorf("hnsw: a codes-only graph with nodes but no codes to search")
	}
	if !x.testing.ignoreSettled {
		q.adm.settled = g.settled.Load()
	}
	if nq == 1 || threads == 1 {
		s := x.getSearcher()
		s.ndis, s.nrefine, s.nhops, s.nreroute = 0, 0, 0, 0
		for i := 0; i < nq; i++ {
			x.searchOne(s, &q, queries, i, outIDs, outDists)
		}
		stats.DistanceComputations, stats.Refinements = s.ndis, s.nrefine
		stats.LinksRead, stats.Rerouted = s.nhops, s.nreroute
		x.putSearcher(s)
		return stats, nil
	}
	x.searchParallel(q, nq, threads, queries, outIDs, outDists, &stats)
	return stats, nil
}

// searchParallel answers nq queries on up to threads goroutines and adds
// their work to stats. It is apart from SearchFiltered so that only this
// path pays for the closure's heap copy of q.
func (x *Index) searchParallel(q query, nq, threads int, queries []float32, outIDs []int64, outDists []float32, stats *SearchStats) {
	var total, refined, hops, rerouted atomic.Int64
	x.parallel(nq, threads, func(s *searcher, i int) {
		before, beforeRefine, beforeHops, beforeReroute := s.ndis, s.nrefine, s.nhops, s.nreroute
		x.searchOne(s, &q, queries, i, outIDs, outDists)
		total.Add(s.ndis - before)
		refined.Add(s.nrefine - beforeRefine)
		hops.Add(s.nhops - beforeHops)
		rerouted.Add(int64(s.nreroute - beforeReroute))
	})
	stats.DistanceComputations, stats.Refinements = total.Load(), refined.Load()
	stats.LinksRead, stats.Rerouted = hops.Load(), int(rerouted.Load())
}

// query holds what is fixed for every query of a Search call.
type query struct {
	g     *graph
	k, ef int
	// rerouteEf is the ef of a routing search that redoes a filtered
	// search reaching fewer than k allowed nodes (filteredEf widened).
	rerouteEf int
	plan      Plan
	adm       admission
	rq        *rabitqCodes // RaBitQ codes of g, or nil
	// fallback is how a filtered graph search of the allowed nodes that
	// cannot answer a query does (filterFallback): PlanGraph routes at
	// rerouteEf, PlanExact scans the allowed nodes. allowedFraction is
	// selected/live, what sparseNear compares the query's neighbourhood to.
	fallback        Plan
	allowedFraction float64
	fallbackWork    int64 // the fallback's cost, searchAllowed's bound
}

// searchOne answers query qi, writing row qi of the outputs.
func (x *Index) searchOne(s *searcher, p *query, queries []float32, qi int, outIDs []int64, outDists []float32) {
	dim, k, g := x.cfg.Dim, p.k, p.g
	q := queries[qi*dim : (qi+1)*dim]
	if x.cfg.Metric.NeedsNormalize() {
		s.query = append(s.query[:0], q...)
		metric.Normalize(s.query)
		q = s.query
	}
	s.setQuery(g, q)
	var found []candidate
	switch p.plan {
	case PlanGraph:
		if p.rq != nil {
			found = x.searchOneRaBitQ(p.rq, g, s, q, k, p.ef, &p.adm)
		} else {
			found = x.searchNode(g, s, q, p)
		}
	case PlanExact:
		if !g.floats && g.sq == nil {
			found = x.scanRaBitQ(p.rq, g, s, q, k, &p.adm)
		} else {
			found = x.scan(g, s, q, k, &p.adm)
		}
	}
	ids := outIDs[qi*k : (qi+1)*k]
	dists := outDists[qi*k : (qi+1)*k]
	for i, c := range found {
		ids[i] = int64(g.labels[c.node])
		dists[i] = c.dist
	}
	orderTies(ids[:len(found)], dists[:len(found)])
	for i := len(found); i < k; i++ {
		ids[i] = -1
		dists[i] = inf
	}
}

// orderTies puts the ids of equal distances in ascending order (the
// answer is nearest first), so that the order of an answer's ties does not
// depend on the path a search took, and the collection's merges of
// segments (ties by key there too) give the same answer whichever segment
// holds each point. Ties are rare but real: duplicate vectors, points
// overwritten with the same vector, codes-only distances.
func orderTies(ids []int64, dists []float32) {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && dists[j] == dists[j-1] && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}

// searchNode returns up to p.k admitted nodes nearest to q, nearest
// first. A filtered search whose allowed nodes the query's neighbourhood
// lacks, or that reaches fewer than k of them, is answered by p.fallback
// instead (filterFallback). The result aliases the searcher's scratch.
func (x *Index) searchNode(g *graph, s *searcher, q []float32, p *query) []candidate {
	k, ef, adm := p.k, p.ef, &p.adm
	e := g.entry.Load()
	if e == noEntry {
		return nil
	}
	top, ep := unpackEntry(e)
	cur := candidate{s.dist(g, x.dk, q, ep), ep}
	for l := top; l > 0; l-- {
		cur = s.greedy(g, x.dk, q, cur, l, adm.settled) // queries admit only ready nodes
	}
	switch {
	case adm.allow == nil || s.testing.routeFilter:
		s.searchLayer(g, x.dk, q, cur, ef, 0, adm)
	case s.sparseNear(g, cur.node, adm, p.allowedFraction) ||
		!s.searchAllowed(g, x.dk, q, cur, ef, s.testing.hopBudget(g), k, p.fallbackWork, adm):
		s.nreroute++
		if p.fallback == PlanExact {
			return x.scan(g, s, q, k, adm)
		}
		s.searchLayer(g, x.dk, q, cur, p.rerouteEf, 0, adm)
	}
	if g.sq != nil && g.floats {
		// Re-rank every candidate by its float distance: the code
		// distances found them, the floats order them.
		for i := range s.results {
			s.ndis++
			s.results[i].dist = g.floatDist(x.dk, q, s.results[i].node)
		}
		heapify(s.results)
		sortAscending(s.results)
	}
	return s.results[:min(k, len(s.results))]
}

// scan returns the k admitted nodes nearest to q by computing every
// admitted node's distance: exact, and the cheaper plan when few nodes are
// admitted.
func (x *Index) scan(g *graph, s *searcher, q []float32, k int, adm *admission) []candidate {
	s.results = s.results[:0]
	// Rows are visited in batches: the batch's rows are prefetched first so
	// their loads overlap (the allowed nodes of a filter are scattered, and
	// one at a time each distance waits on memory).
	const batchSize = 32
	base, stride := g.rowBase(), g.rowBytes
	if g.floats {
		base, stride = unsafe.Pointer(unsafe.SliceData(g.vectors)), uintptr(g.dim)*4
	}
	batch := s.pending[:0]
	// A float graph's batch goes through the multi-row kernel (bit-
	// identical to one call a row), which keeps several rows' loads in
	// flight: the allowed rows of a scan come from memory, not cache.
	rows := g.floats && g.sq == nil && x.dk != distL1 && !s.testing.oneRowKernels
	flush := func() {
		kernels.PrefetchRows(base, stride, batch, g.prefetchLines)
		if rows {
			for i, d := range s.distRows(g, x.dk, q, batch) {
				if len(s.results) < k {
					s.results.push(candidate{d, batch[i]})
				} else if d < s.results[0].dist {
					s.results.replaceTop(candidate{d, batch[i]})
				}
			}
			batch = batch[:0]
			return
		}
		for _, node := range batch {
			var d float32
			if g.floats {
				s.ndis++
				d = g.floatDist(x.dk, q, node)
			} else {
				d = s.dist(g, x.dk, q, node)
			}
			if len(s.results) < k {
				s.results.push(candidate{d, node})
			} else if d < s.results[0].dist {
				s.results.replaceTop(candidate{d, node})
			}
		}
		batch = batch[:0]
	}
	consider := func(node uint32) {
		if !g.isReady(node) {
			return
		}
		batch = append(batch, node)
		if len(batch) == batchSize {
			flush()
		}
	}
	if adm.allow == nil {
		// Up to capacity, not count: count belongs to the writer, and
		// unallocated nodes are never ready.
		for node := 0; node < g.capacity(); node++ {
			consider(uint32(node))
		}
	} else {
		for w, word := range adm.allow {
			for word != 0 {
				b := uint32(bits.TrailingZeros64(word))
				consider(uint32(w)<<6 | b)
				word &= word - 1
			}
		}
	}
	flush()
	s.pending = batch
	sortAscending(s.results)
	return s.results
}
