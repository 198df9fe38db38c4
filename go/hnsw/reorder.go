package hnsw

import (
	"fmt"
	"sync/atomic"
)

// Graph reordering renumbers the nodes of a built graph so that nodes a
// search visits together sit together in memory: a breadth-first order of
// level 0 from the entry point (Coleman et al., "Graph Reordering for
// Cache-Efficient Near Neighbor Search", NeurIPS 2022, measured BFS-like
// orders close to Gorder for HNSW at a fraction of its cost). Ids stay the
// caller's: only the internal node numbers change, and rank keeps the
// insertion order that IDs reports.

// reorderMinNodes is the smallest batch worth renumbering after: a graph
// this small stays in cache whatever its order (buildTesting can replace
// it).
const reorderMinNodes = 16384

// shouldReorder says whether an Add of added nodes that left the graph
// with count nodes renumbers it: when the batch is large and at least half
// of the graph, so repeated small adds never pay for a full copy.
func (x *Index) shouldReorder(added, count int) bool {
	return added >= x.build.minReorderNodes() && 2*added >= count
}

// bfsOrder returns g's nodes in breadth-first order over level 0 from the
// entry point, neighbours in link order; nodes not reached (none in a
// healthy graph) follow in their current order. order[new] = old.
func (g *graph) bfsOrder() []uint32 {
	order, seen := g.reachable(nil)
	for node, ok := range seen {
		if !ok {
			order = append(order, uint32(node))
		}
	}
	return order
}

// reachable runs a breadth-first search of level 0 from the entry point,
// neighbours in link order. It returns the nodes reached in visiting order
// and which nodes were reached; with parent not nil it also records each
// reached node's predecessor there (the entry point's is left as it is).
// The caller holds Index.writeMu or owns g.
func (g *graph) reachable(parent []uint32) (order []uint32, seen []bool) {
	n := g.count
	order = make([]uint32, 0, n)
	seen = make([]bool, n)
	e := g.entry.Load()
	if e == noEntry {
		return order, seen
	}
	_, ep := unpackEntry(e)
	seen[ep] = true
	order = append(order, ep)
	for head := 0; head < len(order); head++ {
		u := order[head]
		links := g.links(u, 0)
		for _, nb := range links[1 : 1+int(links[0])] {
			if !seen[nb] {
				seen[nb] = true
				if parent != nil {
					parent[nb] = u
				}
				order = append(order, nb)
			}
		}
	}
	return order, seen
}

// permuted returns a copy of g whose node i is g's node order[i], with
// every link, the entry point and the insertion ranks renumbered, and
// newOf[old] = new. The caller holds Index.writeMu and no insertion is
// running; g stays valid for searches that still use it.
func (g *graph) permuted(order []uint32) (ng *graph, newOf []uint32) {
	n := g.count
	newOf = make([]uint32, n)
	for i, old := range order {
		newOf[old] = uint32(i)
	}
	ng = newGraph(g.dim, g.m, g.sq, g.floats)
	capNodes := g.capacity()
	dim := g.dim
	if g.floats {
		ng.vectors = permuteRows(g.vectors, order, dim, capNodes)
	}
	if g.sq != nil {
		ng.codes = permuteRows(g.codes, order, dim, capNodes)
		ng.shares = permuteRows(g.shares, order, 1, capNodes)
	}
	ng.labels = permuteRows(g.labels, order, 1, capNodes)
	ng.levels = permuteRows(g.levels, order, 1, capNodes)
	ng.flags = permuteRows(g.flags, order, 1, capNodes)
	ng.parent = make([]uint32, capNodes)
	for i := range ng.parent {
		ng.parent[i] = noParent
	}
	for i, old := range order {
		if p := atomic.LoadUint32(&g.parent[old]); p != noParent {
			ng.parent[i] = newOf[p]
		}
	}
	ng.rank = make([]uint32, capNodes)
	adviseHugePages(ng.rank)
	for i, old := range order {
		ng.rank[i] = g.rankOf(old)
	}
	for i := n; i < capNodes; i++ {
		ng.rank[i] = uint32(i) // nodes added later rank after every earlier one
	}

	ng.level0 = make([]uint32, capNodes*g.stride0)
	adviseHugePages(ng.level0)
	for i, old := range order {
		remapLinks(ng.links(uint32(i), 0), g.links(old, 0), newOf)
	}
	ng.upperStart = make([]uint32, capNodes)
	ng.upper = make([]uint32, len(g.upper))
	adviseHugePages(ng.upper)
	for i, old := range order {
		levels := int(g.levels[old])
		if levels == 0 {
			continue
		}
		ng.upperStart[i] = uint32(ng.upperUsed)
		ng.upperUsed += levels * g.strideUp
		for l := 1; l <= levels; l++ {
			remapLinks(ng.links(uint32(i), l), g.links(old, l), newOf)
		}
	}
	ng.count = n
	ng.computeSettled()
	if e := g.entry.Load(); e != noEntry {
		top, ep := unpackEntry(e)
		ng.entry.Store(packEntry(top, newOf[ep]))
	}
	return ng, newOf
}

// remapLinks writes src's neighbour record, renumbered by newOf, to dst.
func remapLinks(dst, src []uint32, newOf []uint32) {
	cnt := atomic.LoadUint32(&src[0])
	dst[0] = cnt
	for j := 1; j <= int(cnt); j++ {
		dst[j] = newOf[atomic.LoadUint32(&src[j])]
	}
}

// permuteRows returns a new array of capNodes rows of width elements whose
// row i is src's row order[i].
func permuteRows[T any](src []T, order []uint32, width, capNodes int) []T {
	dst := make([]T, capNodes*width)
	adviseHugePages(dst)
	for i, old := range order {
		copy(dst[i*width:(i+1)*width], src[int(old)*width:(int(old)+1)*width])
	}
	return dst
}

// rankOf is node's position in insertion order: rank[node], or node itself
// for a graph that was never renumbered.
func (g *graph) rankOf(node uint32) uint32 {
	if g.rank == nil {
		return node
	}
	return g.rank[node]
}

// insertionOrder returns the allocated nodes in insertion order.
func (g *graph) insertionOrder() []uint32 {
	order := make([]uint32, g.count)
	for node := range order {
		order[g.rankOf(uint32(node))] = uint32(node)
	}
	return order
}

// checkPermutation verifies that rank holds every value of [0, len(rank))
// once, as insertionOrder needs.
func checkPermutation(rank []uint32) error {
	seen := make([]bool, len(rank))
	for node, r := range rank {
		if int(r) >= len(rank) || seen[r] {
			return fmt.Errorf("node %d has rank %d: not a permutation of [0, %d)", node, r, len(rank))
		}
		seen[r] = true
	}
	return nil
}

// Renumber puts the nodes in breadth-first order of level 0, as an Add of
// a large batch does after inserting it (shouldReorder), for an index that
// grew by batches too small for that: a collection fed by upserts. It does
// nothing and returns false below reorderMinNodes nodes, or while the live
// ids are fewer than growth times as many as at the last renumbering (by
// an Add, Compact or Renumber; none counts as 0, so growth 0 always
// renumbers). Adds, Removes and Compact wait while it copies the graph;
// searches go on, those already running on the old numbering. The copy is
// in memory even when the vectors were memory-mapped by Load.
func (x *Index) Renumber(growth float64) (bool, error) {
	if err := x.acquire(); err != nil {
		return false, err
	}
	defer x.closeMu.RUnlock()
	x.compactMu.Lock()
	defer x.compactMu.Unlock()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	g := x.graph.Load()
	if err := x.refuseCodesOnly(g, "Renumber", "code the renumbered graph"); err != nil {
		return false, err
	}
	if err := x.checkDeferred(); err != nil {
		return false, fmt.Errorf("hnsw: Renumber: %w", err)
	}
	x.mapMu.RLock()
	live := x.byID.len()
	x.mapMu.RUnlock()
	if g.count < x.build.minReorderNodes() || float64(live) < growth*float64(x.orderedLive) {
		return false, nil
	}
	ng, newOf := g.permuted(g.bfsOrder())
	x.mapMu.Lock()
	x.byID.remap(newOf)
	x.graph.Store(ng)
	x.mapMu.Unlock()
	if x.sealedKeys.Load() {
		x.SealKeys() // the new numbering's table, before a search needs it
	}
	x.orderedLive = live
	return true, x.keepRaBitQ(true, nil)
}

// IDsBreadthFirst returns the live ids in Renumber's order (breadth-first
// over level 0 from the entry point; live nodes not reached follow in
// node order). Another graph built by adding them in this order has its
// nodes laid out by neighbourhood as a renumbered one, without the copy a
// renumbering makes (a collection's merge of one segment). It waits for
// an Add or Remove in progress: the links must hold still.
func (x *Index) IDsBreadthFirst() ([]uint64, error) {
	if err := x.acquire(); err != nil {
		return nil, err
	}
	defer x.closeMu.RUnlock()
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	x.mapMu.RLock()
	defer x.mapMu.RUnlock()
	g := x.graph.Load()
	out := make([]uint64, 0, x.byID.len())
	for _, node := range g.bfsOrder() {
		id := g.labels[node]
		if n, ok := x.byID.get(id); ok && n == node {
			out = append(out, id)
		}
	}
	return out, nil
}
