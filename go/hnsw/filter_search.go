package hnsw

import (
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/go/kernels"
)

// searchAllowed is the level-0 search of a filtered graph plan, in the
// manner of ACORN-1 (Patel et al., SIGMOD 2024): the frontier and the
// results hold only admitted nodes, and only admitted nodes are measured.
// Expanding a node takes its admitted, unvisited neighbours and, through
// each neighbour that is not admitted, that neighbour's admitted,
// unvisited neighbours (two hops), until budget nodes are gathered
// (filterHopBudget). The two-hop links stand in for the links a graph
// built on the allowed nodes alone would have, so the search stays
// connected at a small selectivity without measuring the nodes it passes
// through, which is what the routing search (searchHeaps with a filter)
// pays for: at 10 % it measures about ten nodes per admitted one.
//
// ep, the end of the unfiltered descent, starts the frontier whether or
// not it is admitted. It leaves s.results the (up to) ef nearest admitted
// nodes found, nearest first, and reports whether the search reached at
// least want of them: a search that did not (the admitted nodes sit beyond
// two hops of everything it reached), that needed more than
// maxRouteSteps routing steps, or whose distances passed maxWork (the
// fallback's cost, 0: no bound; a query that falls back so computes at
// most about twice the fallback's distances) is answered by the fallback (searchNode).
func (s *searcher) searchAllowed(g *graph, dk distance, q []float32, ep candidate, ef, budget, want int, maxWork int64, adm *admission) bool {
	startDistances := s.ndis
	s.visited.reset(g.capacity())
	s.drained.reset(g.capacity())
	s.frontier = s.frontier[:0]
	s.results = s.results[:0]
	prefetch := s.testing.alwaysPrefetch || uintptr(g.capacity())*g.rowBytes >= prefetchMinBytes

	s.visited.visit(ep.node)
	s.frontier.push(ep)
	lowerBound := float32(inf)
	if adm.admits(g, ep.node) {
		s.results.push(ep)
		lowerBound = ep.dist
	}
	routes := 0
	for len(s.frontier) > 0 {
		c := s.frontier[0]
		if c.dist > lowerBound && len(s.results) >= ef {
			break
		}
		s.frontier.pop()
		if prefetch && len(s.frontier) > 0 {
			s.prefetchLinks(g, s.frontier[0].node)
		}
		pending := s.admittedNeighbours(g, c.node, budget, prefetch, adm)
		if len(pending) == 0 && len(s.results) < want {
			// No admitted node within two hops while fewer than want
			// were found: route, measuring the neighbours passed through, as
			// the routing search does everywhere (a region the filter
			// left nearly empty). A search that keeps needing to is
			// looking for a correlated filter's far cluster, which the
			// routing search's widened ef finds better: give up.
			if routes++; routes > maxRouteSteps || (maxWork > 0 && s.ndis-startDistances > maxWork) {
				return false
			}
			s.route(g, dk, q, prefetch)
			continue
		}
		if maxWork > 0 && s.ndis-startDistances > maxWork {
			return false
		}
		for i, d := range s.distRows(g, dk, q, pending) {
			if len(s.results) < ef || d < lowerBound {
				nb := pending[i]
				s.frontier.push(candidate{d, nb})
				if len(s.results) < ef {
					s.results.push(candidate{d, nb})
				} else {
					s.results.replaceTop(candidate{d, nb})
				}
				lowerBound = s.results[0].dist
			}
		}
	}
	sortAscending(s.results)
	return len(s.results) >= want
}

// maxRouteSteps is how many routing steps searchAllowed takes before it
// leaves the query to the routing search (searchHeaps at filteredEf).
const maxRouteSteps = 4

// admittedNeighbours returns in s.pending up to budget admitted, unvisited
// nodes one or two level-0 hops from node (two hops only through
// neighbours that are not admitted), marking them visited. Nodes that are
// not admitted are never marked visited: another expansion may pass
// through them again and find neighbours this one's budget left out. One
// whose link list was read to its end is marked drained instead (every
// admitted neighbour of it is visited from then on, so reading it again
// would gather nothing) and not read again in this search: the same
// nodes are gathered, from fewer link lists (each a cache miss: at 1M
// most of a filtered search's time). With prefetch the link lists of the
// second hop are prefetched before they are read, and the rows of the
// gathered nodes before they are measured.
func (s *searcher) admittedNeighbours(g *graph, node uint32, budget int, prefetch bool, adm *admission) []uint32 {
	s.nhops++
	links := g.links(node, 0)
	n := int(atomic.LoadUint32(&links[0]))
	if cap(s.pending) < budget {
		s.pending = make([]uint32, 0, max(budget, g.m0))
	}
	pending := s.pending[:0]
	// through is every neighbour passed through (route measures them);
	// unread those of them whose lists are not drained.
	through, unread := s.through[:0], s.unread[:0]
	stamps, epoch := s.visited.stamps, s.visited.epoch
	drained, drainedEpoch := s.drained.stamps, s.drained.epoch
	for i := 1; i <= n; i++ {
		nb := atomic.LoadUint32(&links[i])
		if !adm.admits(g, nb) {
			// Passed through even if visited: a routing step may have
			// measured it (searchAllowed), which says nothing of its
			// neighbours.
			through = append(through, nb)
			if drained[nb] != drainedEpoch || s.testing.rereadThrough {
				unread = append(unread, nb)
			}
			continue
		}
		if stamps[nb] != epoch && len(pending) < budget {
			stamps[nb] = epoch
			pending = append(pending, nb)
		}
	}
	s.unread = unread
	if len(pending) < budget && len(unread) > 0 {
		if prefetch {
			kernels.PrefetchRows(unsafe.Pointer(unsafe.SliceData(g.level0)), uintptr(g.stride0)*4, unread, (g.stride0*4+63)/64)
		}
	hops:
		for _, mid := range unread {
			s.nhops++
			second := g.links(mid, 0)
			m := int(atomic.LoadUint32(&second[0]))
			for j := 1; j <= m; j++ {
				// The allow bitset (capacity/8 bytes) stays in cache
				// where the visited stamps (2 bytes a node) may not:
				// test it first.
				nb := atomic.LoadUint32(&second[j])
				if !adm.admits(g, nb) || stamps[nb] == epoch {
					continue
				}
				stamps[nb] = epoch
				pending = append(pending, nb)
				if len(pending) == budget {
					if j == m {
						drained[mid] = drainedEpoch
					}
					break hops
				}
			}
			drained[mid] = drainedEpoch
		}
	}
	s.through = through
	s.pending = pending
	if prefetch && len(pending) > 0 {
		kernels.PrefetchRows(g.rowBase(), g.rowBytes, pending, g.prefetchLines)
	}
	return pending
}

// route measures the unvisited nodes searchAllowed last passed through
// (s.through) and puts them in the frontier, not in the results: the
// routing step of a filtered search that found no admitted node within
// two hops while it still had fewer than ef results.
func (s *searcher) route(g *graph, dk distance, q []float32, prefetch bool) {
	pending := s.pending[:0]
	stamps, epoch := s.visited.stamps, s.visited.epoch
	for _, nb := range s.through {
		if stamps[nb] != epoch {
			stamps[nb] = epoch
			pending = append(pending, nb)
		}
	}
	s.pending = pending
	if prefetch && len(pending) > 0 {
		kernels.PrefetchRows(g.rowBase(), g.rowBytes, pending, g.prefetchLines)
	}
	for i, d := range s.distRows(g, dk, q, pending) {
		s.frontier.push(candidate{d, pending[i]})
	}
}

// sparseNear reports whether the allowed nodes one and two level-0 hops
// from node (the end of the query's descent: its neighbourhood) are far
// fewer than the allowed fraction p predicts: fewer than nearDensity·p of
// the distinct nodes there. A filter correlated with the data (the points
// of one region) leaves most queries' neighbourhoods empty of allowed
// nodes; searchAllowed then has to route to the region and walks its
// edge from wherever it first lands, and kept recall at 0.95-0.98 even at
// ef 512 (TestFilterTraversalBench, 100k x 128 clustered, a correlated
// 10 % list), while a random list's neighbourhood holds about p of them.
// Such a query goes to the fallback (filterFallback) at once. It reads
// 1 + 2M link lists, no vectors; searchAllowed resets the visited marks
// it leaves.
func (s *searcher) sparseNear(g *graph, node uint32, adm *admission, p float64) bool {
	if p <= 0 {
		return false
	}
	s.visited.reset(g.capacity())
	s.visited.visit(node)
	links := g.links(node, 0)
	n := int(atomic.LoadUint32(&links[0]))
	seen, admitted := 0, 0
	s.nhops += int64(1 + n)
	count := func(nb uint32) {
		if !s.visited.visit(nb) {
			seen++
			if adm.admits(g, nb) {
				admitted++
			}
		}
	}
	for i := 1; i <= n; i++ {
		nb := atomic.LoadUint32(&links[i])
		count(nb)
		second := g.links(nb, 0)
		m := int(atomic.LoadUint32(&second[0]))
		for j := 1; j <= m; j++ {
			count(atomic.LoadUint32(&second[j]))
		}
	}
	return float64(admitted) < nearDensity*p*float64(seen)
}

// nearDensity is the share of the allowed fraction below which sparseNear
// calls a neighbourhood empty of allowed nodes. A correlated list (the
// points nearest one point: whole clusters and part of one) also leaves
// queries whose neighbourhood holds a few allowed nodes, reached over the
// graph's long links from another cluster than the nearest allowed one:
// the search of the allowed nodes then stays in that cluster whatever ef
// (segquery 300k x 128 in 3 segments, correlated 10 %: recall 0.976 at ef
// 28, 0.9795 at 64) unless they go to the fallback too. At half the
// allowed fraction they do (0.9915 at ef 28, from fewer distances than
// the scan the planner would pick instead), while a random list's
// neighbourhood of about a thousand nodes falls below half its expected
// allowed count by chance only at small selectivities (at 1 %, fewer
// than 5 of an expected 10: about 3 % of queries, by the Poisson
// estimate; TestFilteredGraphRecallAtEachSelectivity's 8k x 32 random
// 10 % sent 7 of 200), where the fallback is a scan of few rows.
const nearDensity = 0.5
