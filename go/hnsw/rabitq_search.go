package hnsw

import (
	"cmp"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/quant/rabitq"
)

// rabitqScratch is the per-goroutine state of a RaBitQ search.
type rabitqScratch struct {
	query     *rabitq.Query
	visited   visitedSet
	buffer    []bufferEntry // candidates by estimate, nearest first
	qbuf      []qgEntry     // searchQG's buffer
	best      maxHeap       // the k best admitted by refined distance
	refined   []candidate   // every refined admitted node by its lower bound (rescore)
	pending   []uint32
	sums      []uint32
	est       []float32   // 1-bit estimates of pending
	bound     []float32   // and their error bounds
	fast      [32]uint32  // kernels.FastScan32 sums of one block
	next      [1]uint32   // the candidate whose links are being prefetched
	late      []candidate // searchRaBitQExpanded: neighbours measured after the traversal
	lateNodes []uint32    // and their nodes
	lastLower float32     // lower bound of the last extended estimate
	estimate  int64       // 1-bit estimates since the scratch was taken
	refine    int64       // refinements (extended code or float) since then
	exact     int64       // float distances since then
	bytes     int64       // bytes of codes, links and vectors read since then (rows touched × their size)
	hops      int64       // nodes expanded (searchQG)
}

// bufferEntry is a candidate of the traversal buffer.
type bufferEntry struct {
	dist     float32 // refined distance, or 1-bit estimate
	node     uint32
	lower    float32 // the 1-bit estimate's lower bound
	expanded bool
	refined  bool
}

// blockPrefetchLines is how many cache lines of the next candidate's
// neighbour record the search prefetches while it expands the current
// one; the hardware's stream prefetcher follows the rest of the record.
// Prefetching the whole record (44 lines at D = 512, 1 bit) instead was
// 0.95x the CPU time at ef 48 and 1.02x at ef 96 (50k pypi-use512, 11
// rounds, load 50-65: bench/results/rabitq-go/*-prefetch-ab.json), within
// the noise, so 12 stays; so were the 12 lines of the first block's
// factors and ids prefetched beside them (0.97x at ef 48, 1.11x at ef 96:
// *-prefetch-tail-ab.json).
const blockPrefetchLines = 12

// searchRaBitQ answers one query on the codes, as RaBitQ-Library's HNSW
// does (with the neighbour blocks, as its SymphonyQG does: a node's
// neighbours are estimated from one contiguous record, 32 at a time): the traversal keeps ef candidates ordered by estimated distance
// (1-bit for a neighbour, refined once it has been refined); a neighbour
// is refined (its extended code, or its float vector for 1-bit codes) only
// when it is admitted and its lower bound, estimate − ε₀·error, can still
// beat the k-th best refined distance, so most neighbours cost one integer
// sum. The k best are rescored with the float vectors when the index has
// them, so reported distances are exact. Non-admitted nodes route but are
// never refined or returned. q is normalised already for cosine. It returns
// up to k candidates, nearest first, aliasing the scratch.
func (x *Index) searchRaBitQ(rq *rabitqCodes, g *graph, sc *rabitqScratch, q []float32, k, ef int, adm *admission) []candidate {
	e := g.entry.Load()
	if e == noEntry {
		return nil
	}
	sc.query.Prepare(q)
	top, ep := unpackEntry(e)
	if int(ep) >= rq.n {
		return nil // the entry is newer than the codes (rabitqFor rules this out)
	}
	cur := candidate{rq.estimateOne(sc, ep), ep}
	for l := top; l > 0; l-- {
		cur = rq.greedy(g, sc, cur, l)
	}

	sc.visited.reset(g.capacity())
	sc.visited.visit(cur.node)
	sc.buffer = sc.buffer[:0]
	sc.best = sc.best[:0]
	worst := inf // k-th best refined distance, once there are k
	consider := func(node uint32, d float32) {
		if rq.ex != nil {
			sc.refined = append(sc.refined, candidate{sc.lastLower, node})
		}
		if len(sc.best) < k {
			sc.best.push(candidate{d, node})
		} else if d < sc.best[0].dist {
			sc.best.replaceTop(candidate{d, node})
		}
		if len(sc.best) == k {
			worst = sc.best[0].dist
		}
	}
	sc.refined = sc.refined[:0]
	d := rq.refineOne(g, x.dk, sc, q, cur.node)
	if !adm.filtering() || adm.admits(g, cur.node) {
		consider(cur.node, d)
	}
	sc.insert(bufferEntry{dist: d, node: cur.node, lower: d, refined: true}, ef)
	for next := 0; next < len(sc.buffer); {
		e := &sc.buffer[next]
		e.expanded = true
		node := e.node
		if rq.refineOnExpand && !e.refined && e.lower < worst && (!adm.filtering() || adm.admits(g, node)) {
			// Put it where its refined distance belongs, as SymphonyQG
			// does with the exact distance of each visited node.
			d := rq.refineOne(g, x.dk, sc, q, node)
			consider(node, d)
			sc.buffer = append(sc.buffer[:next], sc.buffer[next+1:]...)
			sc.insert(bufferEntry{dist: d, node: node, lower: d, expanded: true, refined: true}, ef)
		}
		for j := next + 1; j < len(sc.buffer); j++ {
			if !sc.buffer[j].expanded {
				sc.next[0] = sc.buffer[j].node
				if rq.blocks != nil {
					kernels.PrefetchRows(unsafe.Pointer(unsafe.SliceData(rq.blocks.words)), uintptr(rq.blocks.nodeWords)*4, sc.next[:], blockPrefetchLines)
				} else {
					kernels.PrefetchRows(unsafe.Pointer(unsafe.SliceData(g.level0)), uintptr(g.stride0)*4, sc.next[:], (g.stride0*4+63)/64)
				}
				break
			}
		}
		var pending []uint32
		if rq.blocks != nil {
			pending = rq.blockNeighbours(sc, node)
		} else {
			pending = rq.rowNeighbours(g, sc, node)
			sc.bytes += 4*int64(g.stride0) + 8*int64(rq.stride*len(pending))
		}
		lowest := len(sc.buffer)
		for i, nb := range pending {
			est, bound := sc.est[i], sc.bound[i]
			lower, refined := est-bound, false
			if !rq.refineOnExpand && lower < worst && (!adm.filtering() || adm.admits(g, nb)) {
				est, refined = rq.refineOne(g, x.dk, sc, q, nb), true
				consider(nb, est)
			}
			if pos := sc.insert(bufferEntry{dist: est, node: nb, lower: lower, refined: refined}, ef); pos < lowest {
				lowest = pos
			}
		}
		next = min(next, lowest) // entries before next are expanded
		for next < len(sc.buffer) && sc.buffer[next].expanded {
			next++
		}
	}

	if g.floats && rq.ex != nil && !rq.codesOnly {
		return sc.rescore(g, x.dk, q, k)
	}
	res := sc.best
	sortAscending(res)
	return res
}

// rescore is the last re-ranking on an index with float vectors: the
// refined candidates are taken in order of their lower bound (extended
// estimate − ε₀·error) and measured exactly until the next lower bound
// exceeds the k-th exact distance, so every candidate that can still enter
// the top k is measured and no other. It returns the exact top k, nearest
// first, in sc.best.
func (sc *rabitqScratch) rescore(g *graph, dk distance, q []float32, k int) []candidate {
	lower := sc.refined
	slices.SortFunc(lower, func(a, b candidate) int { return cmp.Compare(a.dist, b.dist) })
	best := sc.best[:0]
	for _, c := range lower {
		if len(best) == k && c.dist > best[0].dist {
			break
		}
		sc.exact++
		sc.bytes += 4 * int64(g.dim)
		d := g.floatDist(dk, q, c.node)
		if len(best) < k {
			best.push(candidate{d, c.node})
		} else if d < best[0].dist {
			best.replaceTop(candidate{d, c.node})
		}
	}
	sc.best = best
	sortAscending(best)
	return best
}

// searchOneRaBitQ is searchRaBitQ with pooled scratch, counting its work in
// s; the result aliases s.results.
func (x *Index) searchOneRaBitQ(rq *rabitqCodes, g *graph, s *searcher, q []float32, k, ef int, adm *admission) []candidate {
	if rq.qg != nil {
		return x.searchOneQG(rq.qg, g, s, q, k, ef, adm)
	}
	sc := rq.pool.Get().(*rabitqScratch)
	sc.estimate, sc.refine, sc.exact, sc.bytes = 0, 0, 0, 0
	if rq.expanded && rq.blocks != nil && g.floats && !rq.codesOnly {
		s.results = append(s.results[:0], x.searchRaBitQExpanded(rq, g, sc, q, k, ef, adm)...)
	} else {
		s.results = append(s.results[:0], x.searchRaBitQ(rq, g, sc, q, k, ef, adm)...)
	}
	if s.testing.rabitqBytes != nil {
		s.testing.rabitqBytes.Add(sc.bytes)
	}
	s.ndis += sc.estimate + sc.refine + sc.exact
	s.nrefine += sc.refine
	rq.pool.Put(sc)
	return s.results
}

// insert adds a candidate to the buffer of at most ef, keeping it sorted,
// and returns its position (len(buffer) when it does not enter).
func (sc *rabitqScratch) insert(c bufferEntry, ef int) int {
	b := sc.buffer
	d := c.dist
	if len(b) == ef && d >= b[len(b)-1].dist {
		return len(b)
	}
	pos := len(b)
	for pos > 0 && b[pos-1].dist > d {
		pos--
	}
	if pos == ef {
		// A full buffer and a distance no comparison places (NaN, from
		// damaged factors): it does not enter.
		return len(b)
	}
	if len(b) < ef {
		b = append(b, bufferEntry{})
	}
	copy(b[pos+1:], b[pos:len(b)-1])
	b[pos] = c
	sc.buffer = b
	return pos
}

// unvisited marks node's neighbours at level visited and returns the coded
// ones that were not. Nodes past the codes (inserted since BuildRaBitQ; a
// search sees them only while such an Add runs) are skipped.
func (rq *rabitqCodes) unvisited(g *graph, sc *rabitqScratch, node uint32, level int) []uint32 {
	links := g.links(node, level)
	n := int(atomic.LoadUint32(&links[0]))
	pending := sc.pending[:0]
	for i := 1; i <= n; i++ {
		nb := atomic.LoadUint32(&links[i])
		if int(nb) >= rq.n || sc.visited.visit(nb) {
			continue
		}
		pending = append(pending, nb)
	}
	sc.pending = pending
	if len(pending) > 0 {
		kernels.PrefetchRows(unsafe.Pointer(unsafe.SliceData(rq.rows)), uintptr(rq.stride)*8, pending, (rq.stride*8+63)/64)
	}
	return pending
}

// sums runs the 1-bit kernel on nodes.
func (rq *rabitqCodes) sums(sc *rabitqScratch, nodes []uint32) []uint32 {
	if cap(sc.sums) < len(nodes) {
		sc.sums = make([]uint32, 2*len(nodes))
	}
	out := sc.sums[:len(nodes)]
	kernels.BitDotU8Rows(sc.query.Code, rq.rows, rq.stride, nodes, out)
	sc.estimate += int64(len(nodes))
	return out
}

// estimateOne is the 1-bit estimated distance to node.
func (rq *rabitqCodes) estimateOne(sc *rabitqScratch, node uint32) float32 {
	sc.pending = append(sc.pending[:0], node)
	d, _ := sc.query.Estimate1(rq.sums(sc, sc.pending)[0], rq.factors1(node))
	return d
}

// refineOne is the refined distance to node: from its extended code, or
// exact from its float vector when there is no extended code (or, without
// either, the 1-bit estimate).
func (rq *rabitqCodes) refineOne(g *graph, dk distance, sc *rabitqScratch, q []float32, node uint32) float32 {
	switch {
	case rq.blocks != nil && rq.blocks.headWords > 0:
		sc.bytes += 4 * int64(rq.blocks.headWords)
		return rq.refineHead(sc, node)
	case rq.planes != nil:
		return rq.refinePlanes(sc, node)
	case rq.ex != nil:
		sc.refine++
		sc.bytes += int64(rq.padded) + int64(unsafe.Sizeof(rabitq.Factors{}))
		off := int(node) * rq.padded
		d, bound := sc.query.EstimateEx(kernels.DotU8(rq.ex[off:off+rq.padded], sc.query.Code), rq.fx[node])
		sc.lastLower = d - bound
		return d
	case g.floats && !rq.codesOnly:
		sc.refine++
		sc.bytes += 4 * int64(g.dim)
		return g.floatDist(dk, q, node)
	}
	return rq.estimateOne(sc, node)
}

// greedy walks one upper level towards the query by 1-bit estimates.
func (rq *rabitqCodes) greedy(g *graph, sc *rabitqScratch, cur candidate, level int) candidate {
	for changed := true; changed; {
		changed = false
		links := g.links(cur.node, level)
		n := int(atomic.LoadUint32(&links[0]))
		nbs := sc.pending[:0]
		for i := 1; i <= n; i++ {
			if nb := atomic.LoadUint32(&links[i]); int(nb) < rq.n {
				nbs = append(nbs, nb)
			}
		}
		sc.pending = nbs
		sc.bytes += 4*int64(len(links)) + 8*int64(rq.stride*len(nbs))
		for i, s := range rq.sums(sc, nbs) {
			if d, _ := sc.query.Estimate1(s, rq.factors1(nbs[i])); d < cur.dist {
				cur = candidate{d, nbs[i]}
				changed = true
			}
		}
	}
	return cur
}
