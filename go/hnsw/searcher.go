package hnsw

import (
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/go/kernels"
)

// searcher is the per-goroutine scratch of one search or insertion. It is
// pooled so that a search allocates nothing once warm.
type searcher struct {
	visited  visitedSet
	frontier minHeap
	results  maxHeap
	list     []listEntry // searchList's candidates
	query    []float32   // normalised copy of a cosine query
	pruned   []candidate // scratch of the neighbour heuristic
	selected []candidate
	chosen   []candidate // neighbours picked for the node being inserted
	final    []candidate // a neighbour list being published
	old      []uint32    // a neighbour list before replaceLinks rewrites it
	pending  []uint32    // unvisited neighbours of the node being expanded
	through  []uint32    // its neighbours a filtered search passes through (filter_search.go)
	unread   []uint32    // those of them whose link lists are not drained
	drained  visitedSet  // nodes passed through whose admitted neighbours are all visited (filter_search.go)
	dists    []float32   // their distances to the query
	fresh    []candidate // those of them mergeFresh adds to the list
	next     [1]uint32   // the candidate whose links are being prefetched
	ndis     int64       // distance computations since the searcher was taken
	nrefine  int64       // RaBitQ refinements since then (rabitq_search.go)
	nhops    int64       // link lists a filtered search read since then (filter_search.go)
	nreroute int         // filtered searches redone by routing since then

	// The current query's SQ8 code and inner-product share, used instead
	// of the float query when the graph is quantized. qcode aliases either
	// qbuf (an encoded search query) or a node's stored code (an insertion).
	qcode  []uint8
	qshare float32
	qbuf   []uint8

	testing searchTesting // the index's, copied by getSearcher
}

// dist is the distance from the current query (q, or its code on a
// quantized graph) to node. It and pairDist are the only places a search
// calls a kernel, so counting here counts every computation.
func (s *searcher) dist(g *graph, dk distance, q []float32, node uint32) float32 {
	s.ndis++
	if g.sq != nil {
		return g.codeDist(dk, s.qcode, s.qshare, node)
	}
	return g.floatDist(dk, q, node)
}

// distRows sets s.dists[i] to the distance from the current query to
// nodes[i] and returns s.dists[:len(nodes)]. On float graphs it is one
// multi-row kernel call (bit-identical to dist per node), so several rows'
// loads are in flight at once and the call overhead is paid once.
func (s *searcher) distRows(g *graph, dk distance, q []float32, nodes []uint32) []float32 {
	if cap(s.dists) < len(nodes) {
		s.dists = make([]float32, max(len(nodes), 2*g.m0))
	}
	out := s.dists[:len(nodes)]
	if g.sq != nil || s.testing.oneRowKernels || dk == distL1 { // no multi-row L1 kernel
		for i, node := range nodes {
			out[i] = s.dist(g, dk, q, node)
		}
		return out
	}
	s.ndis += int64(len(nodes))
	if dk == distL2 {
		kernels.L2SquaredRows(q, g.vectors, nodes, out)
		return out
	}
	kernels.DotRows(q, g.vectors, nodes, out)
	for i := range out {
		out[i] = 1 - out[i]
	}
	return out
}

// prefetchMinBytes is the size of the searched rows (capacity × row
// bytes) from which searchLayer prefetches: about one core's L2 cache.
const prefetchMinBytes = 1 << 20

// pairDist is the distance between two stored nodes, on codes when the
// graph is quantized.
func (s *searcher) pairDist(g *graph, dk distance, a, b uint32) float32 {
	s.ndis++
	if g.sq != nil {
		return g.codeDist(dk, g.code(a), g.shares[a], b)
	}
	return g.floatDist(dk, g.vector(a), b)
}

// setNodeQuery makes node the current query (for inserting it) and returns
// its float vector (nil on a codes-only graph).
func (s *searcher) setNodeQuery(g *graph, node uint32) []float32 {
	if g.sq != nil {
		s.qcode, s.qshare = g.code(node), g.shares[node]
	}
	if !g.floats {
		return nil
	}
	return g.vector(node)
}

// setQuery makes the (already normalised) float query q current, encoding
// it on a quantized graph.
func (s *searcher) setQuery(g *graph, q []float32) {
	if g.sq == nil {
		return
	}
	if cap(s.qbuf) < len(q) {
		s.qbuf = make([]uint8, len(q))
	}
	s.qcode = s.qbuf[:len(q)]
	s.qshare = g.sq.Encode(q, s.qcode)
}

// greedy walks one upper level towards q, moving to the best neighbour
// until none is closer: the ef=1 search hnswlib uses above level 0.
//
// finished is a node count below which every node's insertion is complete
// (a search's graph.settled; an insertion passes allNodes): a node at or
// above it is stepped onto only once it is flagged ready. A node still
// being inserted is linked from its neighbours at an upper level before
// its own level-0 links are written, so a search that descended onto it
// found no level-0 neighbours and, the node not being admitted, answered
// nothing at all.
func (s *searcher) greedy(g *graph, dk distance, q []float32, cur candidate, level int, finished uint32) candidate {
	for changed := true; changed; {
		changed = false
		links := g.links(cur.node, level)
		n := int(atomic.LoadUint32(&links[0]))
		nbs := s.pending[:0]
		for i := 1; i <= n; i++ {
			nb := atomic.LoadUint32(&links[i])
			if nb >= finished && atomic.LoadUint32(&g.flags[nb])&flagReady == 0 {
				continue
			}
			nbs = append(nbs, nb)
		}
		s.pending = nbs
		for i, d := range s.distRows(g, dk, q, nbs) {
			if d < cur.dist {
				cur = candidate{d, nbs[i]}
				changed = true
			}
		}
	}
	return cur
}

// allNodes is greedy's finished for insertions: every node may be
// stepped onto.
const allNodes = ^uint32(0)

// admission says which nodes a layer search may put in its results. While
// building, every node counts; while answering queries only ready,
// undeleted nodes (and, with a filter, allowed ones) do.
type admission struct {
	readyOnly bool
	allow     bitset // nil means no filter
	settled   uint32 // nodes below are known ready (graph.settled at the start)
}

func (a *admission) filtering() bool { return a.readyOnly || a.allow != nil }

func (a *admission) admits(g *graph, node uint32) bool {
	if a.readyOnly && node >= a.settled && !g.isReady(node) {
		return false
	}
	if a.allow != nil && !a.allow.has(node) {
		return false
	}
	return true
}

// searchLayer leaves in s.results the (up to) ef admitted nodes nearest to
// q found at level, starting from ep, nearest first. Non-admitted nodes
// still route the search, as in hnswlib's handling of deletions.
//
// Without an id filter and with a small ef it keeps one sorted candidate
// list (searchList); otherwise a frontier min-heap beside a bounded result
// max-heap (searchHeaps). Both expand the same nodes in the same order, the
// nearest not yet expanded that is no farther than the ef-th admitted node
// found, and stop when none is left, so their results and distance counts
// agree (up to ties).
func (s *searcher) searchLayer(g *graph, dk distance, q []float32, ep candidate, ef, level int, adm *admission) {
	if adm.allow == nil && ef <= s.testing.maxListEF() && !s.testing.heapsOnly {
		s.searchList(g, dk, q, ep, ef, level, adm)
		return
	}
	s.searchHeaps(g, dk, q, ep, ef, level, adm)
	sortAscending(s.results)
}

// prefetchLinks starts loading node's level-0 link list: the best
// remaining candidate is usually the next to expand, so its links load
// while the current node's neighbours are measured.
func (s *searcher) prefetchLinks(g *graph, node uint32) {
	s.next[0] = node
	kernels.PrefetchRows(unsafe.Pointer(unsafe.SliceData(g.level0)), uintptr(g.stride0)*4, s.next[:], (g.stride0*4+63)/64)
}

// unvisitedNeighbours marks node's neighbours at level visited and returns
// those that were not (in s.pending), prefetching their rows first when
// prefetch is set, so the loads overlap before any distance is computed.
func (s *searcher) unvisitedNeighbours(g *graph, node uint32, level int, prefetch bool) []uint32 {
	links := g.links(node, level)
	n := int(atomic.LoadUint32(&links[0]))
	if cap(s.pending) < n {
		s.pending = make([]uint32, 0, max(n, g.m0))
	}
	// Branch-free: whether a neighbour was visited is a coin toss the
	// predictor loses (most of a build's are, few of a query's), so every
	// neighbour is stamped and written, and the count advances only past
	// the fresh ones. Same nodes, same order as visitedSet.visit would give:
	// 8% less CPU per insertion and 6% per query on 100k x 128.
	pending := s.pending[:n]
	stamps, epoch := s.visited.stamps, s.visited.epoch
	fresh := 0
	for i := 1; i <= n; i++ {
		nb := atomic.LoadUint32(&links[i])
		unseen := 0
		if stamps[nb] != epoch {
			unseen = 1
		}
		stamps[nb] = epoch
		pending[fresh] = nb
		fresh += unseen
	}
	pending = pending[:fresh]
	s.pending = pending
	if prefetch && len(pending) > 0 {
		kernels.PrefetchRows(g.rowBase(), g.rowBytes, pending, g.prefetchLines)
	}
	return pending
}

// listMaxEF is the largest ef searched with the sorted list: inserting
// shifts up to ef entries, which beats two heaps' sifts only while the list
// is short. BenchmarkSearchLayerList (20k x 128): the list takes 0.84x the
// heaps' time at ef 10 on a 2k x 32 graph, 0.91-0.95x at ef 10-256 and 0.97x
// at 512; at 1,024 both visit the whole graph.
const listMaxEF = 512

// listScanMaxEF is the largest ef for which searchList finds an insertion
// point by scanning back from the end rather than bisecting.
// BenchmarkSearchListInsert, scan/bisect time: 0.956 on 2k x 32 at ef 10;
// on 20k x 128 0.934, 0.929, 0.953, 1.017, 1.134 at ef 32, 64, 128, 256,
// 512.
const listScanMaxEF = 128

// listEntry is a candidate of searchList: whether it was expanded, and
// whether it may be a result (tombstones and unfinished nodes route only).
type listEntry struct {
	candidate
	expanded, admitted bool
}

// searchList is searchLayer over one list of candidates sorted by distance
// (the layout of DiskANN's NeighborPriorityQueue): the next node to expand
// is the first unexpanded entry, and a new candidate is inserted in place,
// shifting the farther ones. The list holds at most ef admitted entries;
// when one more arrives, the farthest admitted entry and the non-admitted
// ones behind it leave. For small ef this replaces the two heaps' sifts,
// a third of a search's time on small graphs, with short memmoves.
func (s *searcher) searchList(g *graph, dk distance, q []float32, ep candidate, ef, level int, adm *admission) {
	s.visited.reset(g.capacity())
	prefetch := s.testing.alwaysPrefetch || uintptr(g.capacity())*g.rowBytes >= prefetchMinBytes
	filtering := adm.filtering()
	scan := ef <= s.testing.maxListScanEF()
	if cap(s.list) < ef+1 {
		s.list = make([]listEntry, 0, ef+1)
	}
	first := listEntry{candidate: ep, admitted: !filtering || adm.admits(g, ep.node)}
	list := append(s.list[:0], first)
	nres := 0 // admitted entries in list
	if first.admitted {
		nres = 1
	}
	s.visited.visit(ep.node)
	for cur := 0; cur < len(list); {
		list[cur].expanded = true
		c := list[cur].node
		if prefetch && level == 0 {
			for j := cur + 1; j < len(list); j++ {
				if !list[j].expanded {
					s.prefetchLinks(g, list[j].node)
					break
				}
			}
		}
		pending := s.unvisitedNeighbours(g, c, level, prefetch)
		next := cur + 1
		if !s.testing.mergeOff && (!filtering || (nres == len(list) && allAdmitted(g, adm, pending))) {
			var lowest int
			list, lowest = mergeFresh(list, ef, pending, s.distRows(g, dk, q, pending), &s.fresh)
			nres = len(list)
			next = min(next, lowest)
			for next < len(list) && list[next].expanded {
				next++
			}
			cur = next
			continue
		}
		for i, d := range s.distRows(g, dk, q, pending) {
			// With ef admitted entries, the list ends with the farthest
			// of them: its distance is the bound.
			if nres == ef && d >= list[len(list)-1].dist {
				continue
			}
			// First position whose distance exceeds d: equal distances
			// keep their arrival order. A new candidate usually lands
			// near the end: a short list is scanned from there (with
			// predictable branches), a long one bisected.
			lo := len(list)
			if scan {
				for lo > 0 && list[lo-1].dist > d {
					lo--
				}
			} else {
				lo = 0
				for hi := len(list); lo < hi; {
					m := int(uint(lo+hi) >> 1)
					if list[m].dist <= d {
						lo = m + 1
					} else {
						hi = m
					}
				}
			}
			e := listEntry{candidate: candidate{d, pending[i]}, admitted: !filtering || adm.admits(g, pending[i])}
			list = append(list, listEntry{})
			copy(list[lo+1:], list[lo:len(list)-1])
			list[lo] = e
			if lo < next {
				next = lo
			}
			if e.admitted {
				if nres++; nres > ef {
					// Drop the farthest admitted entry and whatever
					// follows it (non-admitted, and farther).
					list = list[:lastAdmitted(list)]
					nres--
				}
				if nres == ef {
					list = trimPastBound(list)
				}
			}
		}
		for next < len(list) && list[next].expanded {
			next++
		}
		cur = next
	}
	s.list = list
	res := s.results[:0]
	for _, e := range list {
		if e.admitted {
			res = append(res, e.candidate)
		}
	}
	s.results = res
}

// allAdmitted says whether every node may be a result. While it holds for
// the list and the newcomers, a filtered list search is an unfiltered one
// and can merge (mergeFresh) rather than insert one at a time.
func allAdmitted(g *graph, adm *admission, nodes []uint32) bool {
	for _, node := range nodes {
		if !adm.admits(g, node) {
			return false
		}
	}
	return true
}

// lastAdmitted is the index of list's last admitted entry; list holds one.
func lastAdmitted(list []listEntry) int {
	i := len(list) - 1
	for !list[i].admitted {
		i--
	}
	return i
}

// trimPastBound drops the entries farther than the last admitted one (the
// bound, once there are ef admitted): the heaps would never expand them.
func trimPastBound(list []listEntry) []listEntry {
	last := lastAdmitted(list)
	end := last + 1
	for end < len(list) && list[end].dist <= list[last].dist {
		end++
	}
	return list[:end]
}

// searchHeaps is searchLayer with a frontier min-heap and a result
// max-heap, for filtered searches (non-admitted nodes enter the frontier but
// not the results) and large ef. It leaves s.results a max-heap.
func (s *searcher) searchHeaps(g *graph, dk distance, q []float32, ep candidate, ef, level int, adm *admission) {
	s.visited.reset(g.capacity())
	s.frontier = s.frontier[:0]
	s.results = s.results[:0]
	filtering := adm.filtering()
	// Rows of a graph this small stay in cache between queries: issuing
	// prefetches would only cost instructions.
	prefetch := s.testing.alwaysPrefetch || uintptr(g.capacity())*g.rowBytes >= prefetchMinBytes

	s.visited.visit(ep.node)
	s.frontier.push(ep)
	lowerBound := float32(inf)
	if !filtering || adm.admits(g, ep.node) {
		s.results.push(ep)
		lowerBound = ep.dist
	}
	for len(s.frontier) > 0 {
		c := s.frontier[0]
		if c.dist > lowerBound && (len(s.results) >= ef || !filtering) {
			break
		}
		s.frontier.pop()
		if prefetch && level == 0 && len(s.frontier) > 0 {
			s.prefetchLinks(g, s.frontier[0].node)
		}
		pending := s.unvisitedNeighbours(g, c.node, level, prefetch)
		for i, d := range s.distRows(g, dk, q, pending) {
			nb := pending[i]
			if len(s.results) < ef || d < lowerBound {
				s.frontier.push(candidate{d, nb})
				if !filtering || adm.admits(g, nb) {
					if len(s.results) < ef {
						s.results.push(candidate{d, nb})
					} else {
						s.results.replaceTop(candidate{d, nb})
					}
					lowerBound = s.results[0].dist
				}
			}
		}
	}
}
