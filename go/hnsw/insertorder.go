package hnsw

import "slices"

// Insertion order. Building is bound by memory, not arithmetic: inserting
// one vector at ef_construction 200 measures it against some 1,200 stored
// rows (d=128, M=16, 100k clustered points) and reads ~200 neighbour
// lists, and once the graph outgrows the last-level cache most of those
// rows come from DRAM. Vectors close to each other read mostly the same
// rows, so an insertion that follows a nearby one finds them still cached.
//
// Add therefore inserts a batch in rounds, and each round not in the order
// given but sorted by each vector's greedy descent path through the upper
// levels: the node it reaches on each level, from the top down. Vectors
// that descend through the same upper nodes are neighbours, and the
// lexicographic sort also keeps the groups under one upper node together.
// The descent is the one an insertion makes anyway: a level-0 node (all
// but ~1/M of them) starts its level-0 search from the level-1 node its
// descent found, instead of descending again through a graph that has
// barely changed since. Only the order of insertion changes: node numbers
// and levels are fixed before, and the plan is computed on a graph no
// insertion is modifying, so it is the same whatever the thread count.
//
// A round is at most as large as the graph already linked (and within
// [minOrderedRound, maxOrderedRound]), so a large batch into a small or
// empty graph is still planned against a graph at least half its final
// size; the first round into an empty graph goes in the order given.
//
// The gain is the cache's, so it grows with the share of DRAM reads: in
// batches of 1,000 to 100k points, CPU per insertion fell 15-20% on 128-d
// data in 100 tight clusters (the load generator's), 10% on 512-d text
// embeddings (pypi-use512), 5% on 128-d loose clusters. Insertion order
// changes the graph a little: recall@10 at equal ef moved by -0.2 to +0.3
// points depending on the data set and ef (pypi-use512, 6 seeds: -0.08 at
// ef 64, -0.19 at ef 32).
const (
	minOrderedRound = 1024
	maxOrderedRound = 1 << 16 // bounds the paths: 4 bytes per node per upper level
)

// roundSize is how many of the remaining nodes of a batch to insert next,
// with linked nodes in the graph already.
func roundSize(linked, remaining int) int {
	return min(remaining, max(linked, minOrderedRound), maxOrderedRound)
}

// insertionPlan is the order of one round and where its nodes start.
type insertionPlan struct {
	order []uint32    // positions in the round, in the order to insert them
	start []candidate // per position: the level-1 node the descent reached
	paths []uint32    // per position: the rank of the descent's node on each upper level, top first
}

// plan fills p for inserting nodes [first, first+n) of g, whose vectors are
// stored and which are not linked yet. It reports false, leaving the given
// order, when there is nothing to descend: an empty graph, or one level.
// Paths hold insertion ranks, not node numbers, so that a renumbered graph
// (reorder.go) plans the same order as the graph it was copied from.
func (x *Index) plan(g *graph, first, n, threads int, p *insertionPlan) bool {
	e := g.entry.Load()
	if e == noEntry || n < 2 {
		return false
	}
	top, ep := unpackEntry(e)
	if top == 0 {
		return false
	}
	p.paths = grow(p.paths, n*top)
	p.start = grow(p.start, n)
	p.order = grow(p.order, n)
	x.parallel(n, threads, func(s *searcher, i int) {
		q := s.setNodeQuery(g, uint32(first+i))
		cur := candidate{s.dist(g, x.dk, q, ep), ep}
		path := p.paths[i*top : (i+1)*top]
		for l := top; l >= 1; l-- {
			cur = s.greedy(g, x.dk, q, cur, l, allNodes)
			path[top-l] = g.rankOf(cur.node)
		}
		p.start[i] = cur
	})
	for i := range p.order {
		p.order[i] = uint32(i)
	}
	slices.SortFunc(p.order, func(a, b uint32) int {
		pa := p.paths[int(a)*top : int(a+1)*top]
		pb := p.paths[int(b)*top : int(b+1)*top]
		if c := slices.Compare(pa, pb); c != 0 {
			return c
		}
		return int(a) - int(b) // a total order: the plan is deterministic
	})
	return true
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
