package hnsw

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/sq8"
)

// Node flags, stored per node and read atomically by searches.
const (
	// flagReady is set once a node's insertion is complete; only ready
	// nodes are returned by searches.
	flagReady uint32 = 1 << 0
	// flagDeleted marks a tombstone: the node still routes searches but is
	// never returned.
	flagDeleted uint32 = 1 << 1
)

// noEntry is the entry word of an empty graph.
const noEntry = ^uint64(0)

// graph is one generation of the index's storage. Arrays are sized for
// capacity nodes; nodes [0, count) are allocated. A graph is replaced, never
// resized in place, so readers holding an older generation stay safe.
type graph struct {
	dim      int
	m        int // neighbours per upper level
	m0       int // neighbours at level 0 (2·M)
	stride0  int // uint32 words per level-0 record: 1 + m0
	strideUp int // uint32 words per upper level: 1 + m

	count int // allocated nodes; written only under Index.writeMu

	rowBytes      uintptr // bytes per row the search reads (float vector or code)
	prefetchLines int     // cache lines of a row worth prefetching

	// With SQ8, the graph is built and searched on codes: sq holds the
	// ranges, codes one byte per dimension per node, shares each node's
	// inner-product term (see package sq8). vectors is then kept only for
	// re-ranking, and is nil when the index stores codes alone.
	sq     *sq8.Quantizer
	codes  []uint8
	shares []float32
	floats bool // vectors are stored

	vectors    []float32
	level0     []uint32
	upper      []uint32
	upperStart []uint32 // offset of a node's level 1 in upper; only for levels > 0
	upperUsed  int      // words of upper allocated
	levels     []uint8
	labels     []uint64
	flags      []uint32
	// parent is each node's link in the level-0 spanning tree that keeps
	// every node reachable (tree.go); noParent for the root and orphans.
	parent []uint32
	// rank is each node's position in insertion order once the graph has
	// been renumbered (reorder.go); nil means node order is insertion order.
	rank []uint32

	// settled is a node count such that every node below it is ready and
	// not deleted: searches skip the flag check (a load from a large,
	// randomly accessed array) for those. Raised when an Add completes
	// with no tombstone below it, lowered before a node becomes one.
	settled atomic.Uint32

	// entry packs the top level (high 32 bits) and entry node (low 32);
	// noEntry when the graph is empty.
	entry atomic.Uint64
}

func newGraph(dim, m int, sq *sq8.Quantizer, floats bool) *graph {
	g := &graph{dim: dim, m: m, m0: 2 * m, stride0: 1 + 2*m, strideUp: 1 + m, sq: sq, floats: floats}
	g.setRowGeometry()
	g.entry.Store(noEntry)
	return g
}

// setRowGeometry derives the prefetch parameters from the dimension. Two
// lines per row start the loads and the hardware's stream prefetcher
// fetches the rest; prefetching more stalls on the line-fill buffers (32
// neighbours × 8 lines measured 15-20% slower than 2 lines on 512-d
// vectors, both for search and build).
func (g *graph) setRowGeometry() {
	g.rowBytes = uintptr(g.dim) * 4
	if g.sq != nil {
		g.rowBytes = uintptr(g.dim)
	}
	g.prefetchLines = min((int(g.rowBytes)+63)/64, 2)
}

// rowBase is the start of the rows the search reads, for prefetching.
func (g *graph) rowBase() unsafe.Pointer {
	if g.sq != nil {
		return unsafe.Pointer(unsafe.SliceData(g.codes))
	}
	return unsafe.Pointer(unsafe.SliceData(g.vectors))
}

func (g *graph) capacity() int { return len(g.levels) }

// grown returns a graph with room for at least nodes nodes and upperWords
// more upper-level words, copying g's contents. Callers hold Index.writeMu
// and no insertion is running, so the copy is consistent.
func (g *graph) grown(nodes, upperWords int) *graph {
	return g.regrown(nodes, upperWords, g.sq)
}

// regrown is grown with the quantizer replaced by sq (set when the first
// batch trains it).
func (g *graph) regrown(nodes, upperWords int, sq *sq8.Quantizer) *graph {
	ng := &graph{dim: g.dim, m: g.m, m0: g.m0, stride0: g.stride0, strideUp: g.strideUp, count: g.count,
		sq: sq, floats: g.floats}
	ng.setRowGeometry()
	ng.entry.Store(g.entry.Load())
	ng.settled.Store(g.settled.Load())
	capNodes := g.capacity()
	if nodes > capNodes {
		capNodes = max(nodes, capNodes+capNodes/2, 1024)
	}
	if g.floats {
		ng.vectors = growCopy(g.vectors[:g.count*g.dim], capNodes*g.dim)
	}
	if sq != nil {
		ng.codes = growCopy(g.codes[:min(len(g.codes), g.count*g.dim)], capNodes*g.dim)
		ng.shares = growCopy(g.shares[:min(len(g.shares), g.count)], capNodes)
	}
	ng.level0 = growCopyAtomic(g.level0[:g.count*g.stride0], capNodes*g.stride0)
	ng.upperStart = growCopy(g.upperStart[:g.count], capNodes)
	ng.levels = growCopy(g.levels[:g.count], capNodes)
	ng.labels = growCopy(g.labels[:g.count], capNodes)
	ng.flags = growCopyAtomic(g.flags[:g.count], capNodes)
	if g.rank != nil {
		ng.rank = growCopy(g.rank[:g.count], capNodes)
		for i := g.count; i < capNodes; i++ {
			ng.rank[i] = uint32(i)
		}
	}
	ng.parent = growCopyAtomic(g.parent[:g.count], capNodes)
	for i := g.count; i < capNodes; i++ {
		ng.parent[i] = noParent
	}
	// Room for the upper levels capNodes nodes draw on average
	// (strideUp/(M-1) words each: a node reaches level l with probability
	// M^-l) and a quarter more, so that they rarely force a growth of
	// their own, which would copy every array for want of a small one.
	needUpper := g.upperUsed + upperWords
	capUpper := max(len(g.upper), capNodes*g.strideUp/(g.m-1)*5/4)
	if needUpper > capUpper {
		capUpper = max(needUpper, capUpper+capUpper/2)
	}
	ng.upper = growCopyAtomic(g.upper[:g.upperUsed], capUpper)
	ng.upperUsed = g.upperUsed
	return ng
}

// growCopy returns a new array of n elements starting with src. Large
// arrays are advised onto huge pages before anything touches them, so the
// copy's page faults already allocate huge pages.
func growCopy[T any](src []T, n int) []T {
	dst := make([]T, n)
	adviseHugePages(dst)
	inParts(len(src), func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
	return dst
}

// growCopyAtomic copies words that searches may be reading atomically in
// the old generation (they are not being written: inserts are paused).
func growCopyAtomic(src []uint32, n int) []uint32 {
	dst := make([]uint32, n)
	adviseHugePages(dst)
	inParts(len(src), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst[i] = atomic.LoadUint32(&src[i])
		}
	})
	return dst
}

// parallelCopyMin is the element count from which inParts splits a copy.
const parallelCopyMin = 1 << 18

// inParts runs part over [0, n) split among GOMAXPROCS goroutines when n is
// large. A grown graph's arrays are mostly fresh memory, and first touching
// it (the page faults, which a virtual machine makes dearer) costs more than
// copying: the last growth of a 100k x 128 build took 94 ms on one core, 50
// on two. Insertions are paused meanwhile, so the other cores are idle.
func inParts(n int, part func(lo, hi int)) { splitParts(n, parallelCopyMin, part) }

// splitParts runs part over [0, n) split among GOMAXPROCS goroutines, each
// part at least minPart elements (one part, on the caller's goroutine,
// when n is below twice that).
func splitParts(n, minPart int, part func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/minPart)
	if parts <= 1 {
		part(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		wg.Go(func() { part(lo, hi) })
	}
	wg.Wait()
}

// vector returns node's stored vector.
func (g *graph) vector(node uint32) []float32 {
	off := int(node) * g.dim
	return g.vectors[off : off+g.dim : off+g.dim]
}

// code returns node's SQ8 code.
func (g *graph) code(node uint32) []uint8 {
	off := int(node) * g.dim
	return g.codes[off : off+g.dim : off+g.dim]
}

// floatDist is the float distance from q to node's stored vector.
func (g *graph) floatDist(dk distance, q []float32, node uint32) float32 {
	v := g.vector(node)
	switch dk {
	case distL2:
		return kernels.L2Squared(q, v)
	case distL1:
		return kernels.L1(q, v)
	}
	return 1 - kernels.Dot(q, v)
}

// codeDist is the distance between the code c (with inner-product share a)
// and node's code.
func (g *graph) codeDist(dk distance, c []uint8, a float32, node uint32) float32 {
	if dk == distL2 { // SQ8 graphs are L2 or inner product (Config.validate)
		return g.sq.L2(c, g.code(node))
	}
	return 1 - g.sq.Dot(c, a, g.code(node), g.shares[node])
}

// links returns node's neighbour record at level: word 0 is the count,
// the rest are neighbour slots.
func (g *graph) links(node uint32, level int) []uint32 {
	if level == 0 {
		off := int(node) * g.stride0
		return g.level0[off : off+g.stride0 : off+g.stride0]
	}
	off := int(g.upperStart[node]) + (level-1)*g.strideUp
	return g.upper[off : off+g.strideUp : off+g.strideUp]
}

// maxLinks is the neighbour capacity at level.
func (g *graph) maxLinks(level int) int {
	if level == 0 {
		return g.m0
	}
	return g.m
}

func (g *graph) isReady(node uint32) bool {
	return atomic.LoadUint32(&g.flags[node])&(flagReady|flagDeleted) == flagReady
}

// lowerSettled makes sure node is not below settled; call it before node
// stops being ready-and-undeleted.
func (g *graph) lowerSettled(node uint32) {
	for {
		cur := g.settled.Load()
		if node >= cur || g.settled.CompareAndSwap(cur, node) {
			return
		}
	}
}

// computeSettled sets settled to the length of the prefix of nodes that
// are ready and not deleted (after a load or a renumbering).
func (g *graph) computeSettled() {
	n := 0
	for n < g.count && g.flags[n]&(flagReady|flagDeleted) == flagReady {
		n++
	}
	g.settled.Store(uint32(n))
}

func (g *graph) setFlag(node uint32, f uint32) {
	atomic.OrUint32(&g.flags[node], f)
}

func packEntry(level int, node uint32) uint64 { return uint64(level)<<32 | uint64(node) }

func unpackEntry(e uint64) (level int, node uint32) { return int(e >> 32), uint32(e) }
