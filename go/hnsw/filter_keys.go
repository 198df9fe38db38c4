package hnsw

import (
	"slices"
	"sync/atomic"
)

// keyTable is an index's live ids in ascending order beside their nodes,
// for compiling a sorted allow list (Filter.Sorted) without looking up
// each of its ids: the list and the table are intersected by galloping,
// which skips the ids outside the index's own in O(log) and costs the
// smaller side times the log of the ratio otherwise. A collection's
// segments each hold a part of its keys, and a sealed segment's ids sit
// in a sparse map (idtable.go): looking up every id of a 10 % allow list
// in each of 9 segments cost more than the search (go/collection/segment
// TestSegmentQueryBench).
//
// It is current while the graph and byID's set count are those it was
// built from: ids removed since are tombstones in it (compileSorted looks
// their keys up again), ids added or renumbered make a new graph or set.
// It costs 12 bytes per node and is built only for an index whose ids did
// not change between two filtered searches (a sealed segment), never for
// one taking inserts.
type keyTable struct {
	g     *graph
	sets  uint64
	keys  []uint64
	nodes []uint32
}

// sortedKeys returns the current key table, building it when the ids
// have not changed since the previous filtered search, or nil. The caller
// holds mapMu (read).
func (x *Index) sortedKeys(g *graph) *keyTable {
	sets := x.byID.sets
	if t := x.keys.Load(); t != nil && t.g == g && t.sets == sets {
		return t
	}
	if x.quietSets.Swap(sets+1) != sets+1 {
		return nil
	}
	t := &keyTable{g: g, sets: sets, keys: make([]uint64, 0, x.byID.len()), nodes: make([]uint32, 0, x.byID.len())}
	for id, v := range x.byID.dense {
		if v != 0 {
			t.keys, t.nodes = append(t.keys, uint64(id)), append(t.nodes, v-1)
		}
	}
	if len(x.byID.sparse) > 0 {
		start := len(t.keys)
		for id, node := range x.byID.sparse {
			t.keys, t.nodes = append(t.keys, id), append(t.nodes, node)
		}
		sortByKey(t.keys[start:], t.nodes[start:])
	}
	x.keys.Store(t)
	return t
}

// sortByKey sorts keys ascending and nodes with them.
func sortByKey(keys []uint64, nodes []uint32) {
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case keys[a] < keys[b]:
			return -1
		case keys[a] > keys[b]:
			return 1
		}
		return 0
	})
	k, n := slices.Clone(keys), slices.Clone(nodes)
	for i, o := range order {
		keys[i], nodes[i] = k[o], n[o]
	}
}

// compileSorted sets in allowed the nodes of the ids of allow (ascending)
// that t holds live, by galloping through both. A node removed since t was built is looked up again by its id (an
// upsert in flight still maps it), as compileFilter's lookups would. The
// caller holds mapMu (read).
func (x *Index) compileSorted(t *keyTable, allow []uint64, allowed bitset) {
	keys, g := t.keys, t.g
	i, j := 0, 0
	for i < len(allow) && j < len(keys) {
		a, k := allow[i], keys[j]
		switch {
		case a < k:
			i = gallop(allow, i, k)
		case k < a:
			j = gallop(keys, j, a)
		default:
			node := t.nodes[j]
			if atomic.LoadUint32(&g.flags[node])&flagDeleted != 0 {
				var ok bool
				if node, ok = x.byID.get(a); !ok {
					i, j = i+1, j+1
					continue
				}
			}
			allowed.set(node)
			i, j = i+1, j+1
		}
	}
}

// gallop returns the first index at or after from whose value is at
// least v in the ascending s (len(s) if none), probing 1, 2, 4, ... ahead
// before a binary search: O(log d) for a distance d.
func gallop(s []uint64, from int, v uint64) int {
	step, lo, hi := 1, from, from+1
	for hi < len(s) && s[hi] < v {
		lo = hi
		step *= 2
		hi = from + step
	}
	hi = min(hi, len(s))
	at, _ := slices.BinarySearch(s[lo:hi], v)
	return lo + at
}
