package hnsw

import (
	"slices"
	"sync/atomic"
)

// keyTable is what compiling a sorted allow list (Filter.Sorted) needs
// beyond the id table: the range of the index's live ids, so that the ids
// of the list outside it are skipped in O(log n), and the ids of the
// sparse map (idtable.go) in order beside their nodes, which the list's
// ids past the dense table are intersected with by galloping instead of
// being looked up one by one in the map. A collection's segments each
// hold a part of its keys, and a later segment's ids sit in its sparse
// map: looking up every id of a 10 % allow list in each of 9 segments
// cost more than the search (go/collection/segment TestSegmentQueryBench);
// ids in the dense table are cheaper to look up (one array read) than
// any intersection.
//
// It is current while the graph and byID's set count are those it was
// built from: Remove clears a removed id's window slot (forget) and a
// removed node of the sorted keys is a tombstone (compileSorted looks its
// key up again); ids added or renumbered make a new graph or set. It
// costs at most 12 bytes per sparse id. A sealed index (SealKeys: a
// segment that takes no more ids, only removals) builds it once, when
// sealed, and
// again only if a renumbering made it stale; an index taking inserts
// builds it only once its ids did not change between two filtered
// searches, so that a stream of inserts does not rebuild it per search.
//
// The sparse ids of a segment are mostly one run of consecutive ids (a
// later segment of a collection numbered 0..n-1, past the reach of its
// dense table): those sit in a window, window[id-base] = node+1 (0:
// absent), when its span is at most windowSpan times their count, so
// that they are looked up with one array read as the dense ones are
// instead of galloped through: BenchmarkSortedFilterCompile (20k ids, a
// 10 % list, CPU time, load average 25-45) compiles 17-20 ns per allowed
// id galloping, 2.9-3.9 ns through the window (5-6 ns while it checked
// each node for a tombstone), 2.6-3.9 ns through the dense table. In 10
// segments of 100k of a 1M collection, 6 are past the dense table's
// reach. The window costs no more memory than the sorted keys would.
type keyTable struct {
	g      *graph
	sets   uint64
	lo, hi uint64 // the smallest and largest live id; lo > hi: none
	// Either the window of the sparse ids, or their sorted keys and
	// their nodes.
	base   uint64
	window []uint32
	keys   []uint64
	nodes  []uint32
}

// windowSpan is how many window slots (4 bytes) a sparse id may cost:
// the 12 bytes a sorted key and its node cost.
const windowSpan = 3

// SealKeys says the index takes no more ids (a sealed segment; removals
// are tombstones, which the table handles) and builds its sorted key
// table now, so that no filtered search waits for it or looks the ids up
// one by one meanwhile. Inserting into a sealed index stays correct (the
// table is rebuilt at the next filtered search) but is not what it is for.
func (x *Index) SealKeys() {
	x.sealedKeys.Store(true)
	x.mapMu.RLock()
	defer x.mapMu.RUnlock()
	x.keys.Store(x.buildKeyTable(x.graph.Load()))
}

// SortedKeysCurrent reports whether a filtered search with a sorted allow
// list (Filter.Sorted) would intersect it with a key table already built
// for the index's current ids and graph, rather than build one or look
// the ids up.
func (x *Index) SortedKeysCurrent() bool {
	x.mapMu.RLock()
	defer x.mapMu.RUnlock()
	t := x.keys.Load()
	return t != nil && t.g == x.graph.Load() && t.sets == x.byID.sets()
}

// sortedKeys returns the current key table, building it when it is stale
// and the index is sealed or its ids have not changed since the previous
// filtered search, or nil. The caller holds mapMu (read).
func (x *Index) sortedKeys(g *graph) *keyTable {
	sets := x.byID.sets()
	if t := x.keys.Load(); t != nil && t.g == g && t.sets == sets {
		return t
	}
	if !x.sealedKeys.Load() && x.quietSets.Swap(sets+1) != sets+1 {
		return nil
	}
	t := x.buildKeyTable(g)
	x.keys.Store(t)
	return t
}

// buildKeyTable makes the key table of g and the current ids. The caller
// holds mapMu (read).
func (x *Index) buildKeyTable(g *graph) *keyTable {
	t := &keyTable{g: g, sets: x.byID.sets(), lo: ^uint64(0)}
	dense := x.byID.dense()
	for id, v := range dense {
		if v != 0 {
			t.lo = uint64(id)
			break
		}
	}
	for id := len(dense) - 1; id >= 0; id-- {
		if dense[id] != 0 {
			t.hi = uint64(id)
			break
		}
	}
	n := x.byID.t.SparseLen()
	if n == 0 {
		return t
	}
	first, last := ^uint64(0), uint64(0)
	x.byID.t.EachSparse(func(id uint64, _ uint32) { first, last = min(first, id), max(last, id) })
	t.lo, t.hi = min(t.lo, first), max(t.hi, last)
	if span := last - first; span < uint64(windowSpan*n) {
		t.base, t.window = first, make([]uint32, span+1)
		x.byID.t.EachSparse(func(id uint64, node uint32) { t.window[id-first] = node + 1 })
		return t
	}
	t.keys, t.nodes = make([]uint64, 0, n), make([]uint32, 0, n)
	x.byID.t.EachSparse(func(id uint64, node uint32) {
		t.keys, t.nodes = append(t.keys, id), append(t.nodes, node)
	})
	sortByKey(t.keys, t.nodes)
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
// that the index holds live: the ids outside t's range are skipped, those
// the dense table covers looked up in it, the rest looked up in t's
// window or intersected with its sorted sparse ids by galloping through
// both. The caller holds mapMu (read).
func (x *Index) compileSorted(t *keyTable, allow []uint64, allowed bitset) {
	if t.lo > t.hi {
		return
	}
	from, _ := slices.BinarySearch(allow, t.lo)
	to, _ := slices.BinarySearch(allow, t.hi+1)
	if t.hi == ^uint64(0) {
		to = len(allow)
	}
	allow = allow[from:to]
	dense := x.byID.dense()
	split, _ := slices.BinarySearch(allow, uint64(len(dense)))
	for _, id := range allow[:split] {
		if v := dense[id]; v != 0 {
			allowed.set(v - 1)
		}
	}
	allow = allow[split:]
	if t.window != nil {
		from, _ := slices.BinarySearch(allow, t.base)
		for _, id := range allow[from:] {
			off := id - t.base
			if off >= uint64(len(t.window)) {
				break
			}
			if v := t.window[off]; v != 0 {
				allowed.set(v - 1) // live: Remove clears its slot (forget)
			}
		}
		return
	}
	keys := t.keys
	i, j := 0, 0
	for i < len(allow) && j < len(keys) {
		a, k := allow[i], keys[j]
		switch {
		case a < k:
			i = gallop(allow, i, k)
		case k < a:
			j = gallop(keys, j, a)
		default:
			x.allowCurrent(t.g, a, t.nodes[j], allowed)
			i, j = i+1, j+1
		}
	}
}

// forget clears a removed id's window slot (t nil: no table), so that a
// compilation through the window needs no tombstone check: at 1M in 10
// segments the check's random read of the node flags was most of the
// compilation (TestSegmentQueryBench profile). The caller holds mapMu.
func (t *keyTable) forget(id uint64) {
	if t != nil && id-t.base < uint64(len(t.window)) {
		t.window[id-t.base] = 0
	}
}

// allowCurrent sets in allowed node, id's node when the key table was
// built, or if that node was removed since, id's node now (an upsert in
// flight still maps it), as compileFilter's lookups would.
func (x *Index) allowCurrent(g *graph, id uint64, node uint32, allowed bitset) {
	if atomic.LoadUint32(&g.flags[node])&flagDeleted != 0 {
		var ok bool
		if node, ok = x.byID.get(id); !ok {
			return
		}
	}
	allowed.set(node)
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
