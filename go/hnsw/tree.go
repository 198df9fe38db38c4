package hnsw

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

// Reachability. The neighbour heuristic prunes links, and an HNSW graph
// built with it alone (hnswlib's, FAISS's) strands a few nodes per
// thousand at small M: no path from the entry point reaches them, so no
// search can ever return them. Counting in-links does not prevent it: two
// nodes inserted at once can end up linked only to each other, an island
// with in-degree one each (the crash soak and TestConcurrentPruning found
// exactly that).
//
// So level 0 carries a spanning tree rooted at the entry point: parent[v]
// is a node whose level-0 list links to v, and that link is pinned: pruning
// never drops it. A node is adopted (given a parent) only by a node already
// in the tree, and a parent is set once, so every adopted node stays
// reachable from the root whatever pruning does later. An insertion that
// ends with its node not adopted forces a link from its nearest neighbour
// in the tree (anchor). When a new node becomes the entry point, it pins a
// link to the old root before taking its place, so the old tree hangs
// below the new root.
//
// Every pin write happens under the lock of the node whose list holds the
// link, and only that lock's holder asks whether that link is pinned, so a
// pin and its link never disagree.

// noParent marks the root and nodes not (yet) adopted.
const noParent = ^uint32(0)

// root is the node the tree hangs from: the entry point.
func (g *graph) root() uint32 {
	_, r := unpackEntry(g.entry.Load())
	return r
}

// inTree reports whether a path of pinned links leads from the root to u.
func (g *graph) inTree(u uint32) bool {
	return atomic.LoadUint32(&g.parent[u]) != noParent || u == g.root()
}

// pinned reports whether from's level-0 link to nb is nb's tree link.
// The caller holds from's lock.
func (g *graph) pinned(from, nb uint32) bool {
	return atomic.LoadUint32(&g.parent[nb]) == from
}

// adopt makes from the parent of c if c has none, from is in the tree and
// c is not the root. The caller holds from's lock and has published the
// link from -> c at level 0.
func (g *graph) adopt(from, c uint32) {
	p := &g.parent[c]
	if atomic.LoadUint32(p) != noParent || !g.inTree(from) {
		return
	}
	if atomic.CompareAndSwapUint32(p, noParent, from) && c == g.root() {
		// The root may have changed to c since the check above; a root
		// has no parent (reroot relies on it).
		atomic.CompareAndSwapUint32(p, from, noParent)
	}
}

// anchor links from -> to at level 0 and pins it as to's tree link, evicting
// from's farthest unpinned neighbour when the list is full. It reports
// whether to is in the tree afterwards (also when another node adopted it
// first); false when every slot of from is pinned.
func (x *Index) anchor(g *graph, s *searcher, from, to uint32) bool {
	mu := &x.locks[from%lockStripes]
	mu.Lock()
	defer mu.Unlock()
	links := g.links(from, 0)
	n := int(links[0])
	if containsLink(links[1:1+n], to) {
		// Linked already: pin that link unless to was adopted meanwhile
		// (by a node in the tree).
		atomic.CompareAndSwapUint32(&g.parent[to], noParent, from)
		return true
	}
	if n == g.maxLinks(0) && allPinned(g, from, links[1:1+n]) {
		return false // checked before measuring anything: the common refusal
	}
	// to goes first, the rest by distance: if the list is full, the
	// farthest unpinned neighbour makes room, never to.
	cands := append(s.pruned[:0], candidate{s.pairDist(g, x.dk, from, to), to})
	for i := 1; i <= n; i++ {
		nb := links[i]
		cands = append(cands, candidate{s.pairDist(g, x.dk, from, nb), nb})
	}
	sortByDist(cands[1:])
	s.pruned = cands
	if len(cands) > g.maxLinks(0) {
		j := lastUnpinned(g, from, cands[1:])
		if j < 0 {
			return false
		}
		cands = append(cands[:j+1], cands[j+2:]...)
	}
	// Pin before publishing, so replaceLinks keeps to; nothing is evicted
	// there, as cands fits and holds every pinned neighbour.
	if !atomic.CompareAndSwapUint32(&g.parent[to], noParent, from) {
		return true // adopted meanwhile, by a node in the tree
	}
	x.replaceLinks(g, s, from, links, 0, cands)
	return true
}

// adoptOrphan makes sure node, just linked at level 0, is in the tree: if
// no neighbour adopted it while linking back, the nearest node in the tree
// with a slot that is not pinned anchors it, looked for among its chosen
// neighbours, then the rest of the level-0 search's candidates (s.results),
// then the root. A tree has fewer pins than nodes, so one of those has room
// unless every candidate is a hub of pinned children (small M on tight
// clusters); only then are all nodes tried, in order.
func (x *Index) adoptOrphan(g *graph, s *searcher, node uint32) {
	if g.inTree(node) {
		return
	}
	for _, c := range s.chosen {
		if g.inTree(c.node) && x.anchor(g, s, c.node, node) {
			return
		}
	}
	for _, c := range s.results {
		if c.node != node && g.inTree(c.node) && x.anchor(g, s, c.node, node) {
			return
		}
	}
	if x.anchor(g, s, g.root(), node) {
		return
	}
	for u := range uint32(g.count) {
		if u != node && g.inTree(u) && x.anchor(g, s, u, node) {
			return
		}
	}
}

// reroot hangs the tree of the old root below node, which is about to
// become the entry point: node pins a link to the old root, or, if every
// slot of node is pinned, one of node's children does. The caller holds
// entryMu, so the root cannot change meanwhile.
func (x *Index) reroot(g *graph, s *searcher, node, oldRoot uint32) {
	// adopt undoes a parent it gave to the root; wait for that.
	for atomic.LoadUint32(&g.parent[oldRoot]) != noParent {
		runtime.Gosched()
	}
	if x.anchor(g, s, node, oldRoot) {
		return
	}
	links := g.links(node, 0)
	for i := 1; i <= int(atomic.LoadUint32(&links[0])); i++ {
		if c := atomic.LoadUint32(&links[i]); g.pinned(node, c) && x.anchor(g, s, c, oldRoot) {
			return
		}
	}
	// Unreachable in practice (node and each of its 2·M children would
	// need all their slots pinned); CheckIntegrity reports it.
}

// allPinned reports whether every link of from in links is pinned.
func allPinned(g *graph, from uint32, links []uint32) bool {
	for i := range links {
		if !g.pinned(from, atomic.LoadUint32(&links[i])) {
			return false
		}
	}
	return true
}

// lastUnpinned returns the index of the last candidate whose link from
// from is not pinned, or -1.
func lastUnpinned(g *graph, from uint32, cands []candidate) int {
	for j := len(cands) - 1; j >= 0; j-- {
		if !g.pinned(from, cands[j].node) {
			return j
		}
	}
	return -1
}

// buildTree sets parent from a breadth-first search of level 0 from the
// entry point, for graphs saved before the tree was persisted. Nodes the
// search does not reach stay without a parent (CheckIntegrity reports
// them).
func (g *graph) buildTree() {
	g.parent = make([]uint32, g.capacity())
	for i := range g.parent {
		g.parent[i] = noParent
	}
	g.reachable(g.parent)
}

// checkTree verifies that every parent is an allocated node linking to its
// child at level 0 and that the root has none. A codes-only graph keeps no
// tree (nothing inserts into it): there is nothing to check.
func (g *graph) checkTree() error {
	if err := g.checkTreeBounds(); err != nil {
		return err
	}
	return g.checkTreeLinks()
}

// checkTreeBounds verifies that the root has no parent and every parent
// is an allocated node: what an insertion needs to stay in bounds.
func (g *graph) checkTreeBounds() error {
	if g.parent == nil {
		return nil
	}
	if g.count > 0 {
		if p := g.parent[g.root()]; p != noParent {
			return fmt.Errorf("%w: the root %d has parent %d", ErrCorrupt, g.root(), p)
		}
	}
	for node := range g.count {
		if p := atomic.LoadUint32(&g.parent[node]); p != noParent && int(p) >= g.count {
			return fmt.Errorf("%w: node %d has unallocated parent %d", ErrCorrupt, node, p)
		}
	}
	return nil
}

// checkTreeLinks verifies, on a tree that passed checkTreeBounds, that
// every parent links to its child at level 0 (one random read of a link
// list per node: LoadOptions.DeferCRC leaves it to Verify).
func (g *graph) checkTreeLinks() error {
	if g.parent == nil {
		return nil // codes-only: no tree
	}
	for node := range g.count {
		p := atomic.LoadUint32(&g.parent[node])
		if p == noParent {
			continue
		}
		links := g.links(p, 0)
		if !containsLink(links[1:1+int(links[0])], uint32(node)) {
			return fmt.Errorf("%w: node %d's parent %d does not link to it", ErrCorrupt, node, p)
		}
	}
	return nil
}
