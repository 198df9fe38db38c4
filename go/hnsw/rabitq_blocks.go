package hnsw

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/go/kernels"
)

// neighbourBlocks hold, for every coded node, the 1-bit codes and factors of
// its level-0 neighbours beside their ids, in the layout of SymphonyQG
// (Gao & Long, SIGMOD 2025, RaBitQ-Library's symqg): expanding a node during
// the search is one contiguous read of its record, and its neighbours are
// estimated 32 at a time by kernels.FastScan32 instead of one scattered code
// row each.
//
//	words []uint32   node i's record at [i*nodeWords, (i+1)*nodeWords),
//	                 nodeWords = blocks·blockWords, blocks = ⌈m0/32⌉
//	a block of 32 slots (blockWords = D + 192 words = 4·D + 768 bytes):
//	  [0, D)            words: the slots' 1-bit codes, kernels.FastScan32's layout
//	  [D, D+32)         float32 Add of each slot's 1-bit factors
//	  [D+32, D+64)      float32 Rescale
//	  [D+64, D+96)      float32 Err
//	  [D+96, D+128)     float32 Sum
//	  [D+128, D+160)    uint32 Cluster
//	  [D+160, D+192)    uint32 neighbour node id, emptySlot past the node's links
//
// Slot s of node i is the (s+1)-th entry of i's level-0 link list as it was
// when the codes were built; the record carries the ids itself, so a search
// on it never reads the link list. At D = 512, m0 = 32: 2,816 bytes per
// node (44 cache lines), against 88 bytes per node for the code rows.
//
// The blocks are derived from the code rows and the graph and built with
// them (BuildRaBitQ, or Load when a file has codes but no blocks); like the
// rows they describe one graph generation, so Add, Compact and Renumber
// make the search fall back to the float vectors until BuildRaBitQ runs
// again. Remove changes no link list (a tombstone keeps routing), so the
// blocks stay valid across it.
type neighbourBlocks struct {
	blocks     int // per node
	codeWords  int // D: uint32 words of one block's codes
	blockWords int // codeWords + blockFactorWords
	nodeWords  int // blocks·blockWords
	words      []uint32
}

// blockFactorWords is the room of a block's factors and ids: six arrays of
// 32 words.
const blockFactorWords = 6 * 32

// emptySlot is the id of a slot past the end of a node's link list.
const emptySlot = ^uint32(0)

// The arrays after a block's codes, in words from their start.
const (
	blockAdd = 32 * iota
	blockRescale
	blockErr
	blockSum
	blockCluster
	blockIDs
)

func newNeighbourBlocks(g *graph, padded, n int) *neighbourBlocks {
	nb := &neighbourBlocks{blocks: (g.m0 + 31) / 32, codeWords: padded}
	nb.blockWords = nb.codeWords + blockFactorWords
	nb.nodeWords = nb.blocks * nb.blockWords
	nb.words = make([]uint32, n*nb.nodeWords)
	return nb
}

// buildBlocks fills rq.blocks from rq's code rows and g's level-0 links.
// The caller holds Index.writeMu, so no link list changes meanwhile.
func (rq *rabitqCodes) buildBlocks(g *graph) {
	nb := newNeighbourBlocks(g, rq.padded, rq.n)
	inParts(rq.n, func(lo, hi int) {
		for node := lo; node < hi; node++ {
			rq.packNode(g, nb, uint32(node))
		}
	})
	rq.blocks = nb
}

// packNode writes node's record from its current link list.
func (rq *rabitqCodes) packNode(g *graph, nb *neighbourBlocks, node uint32) {
	links := g.links(node, 0)
	count := int(atomic.LoadUint32(&links[0]))
	rec := nb.record(node)
	clear(rec)
	for b := 0; b < nb.blocks; b++ {
		blk := rec[b*nb.blockWords : (b+1)*nb.blockWords]
		codes := wordBytes(blk[:nb.codeWords])
		f := blk[nb.codeWords:]
		for j := 0; j < 32; j++ {
			slot := 32*b + j
			id := emptySlot
			if slot < count {
				id = atomic.LoadUint32(&links[1+slot])
			}
			if id == emptySlot || int(id) >= rq.n {
				f[blockIDs+j] = emptySlot
				continue
			}
			kernels.FastScanPack(codes, j, rq.rows[int(id)*rq.stride:][:rq.words])
			fac := rq.factors1(id)
			f[blockAdd+j] = math.Float32bits(fac.Add)
			f[blockRescale+j] = math.Float32bits(fac.Rescale)
			f[blockErr+j] = math.Float32bits(fac.Err)
			f[blockSum+j] = math.Float32bits(fac.Sum)
			f[blockCluster+j] = fac.Cluster
			f[blockIDs+j] = id
		}
	}
}

// record returns node's record.
func (nb *neighbourBlocks) record(node uint32) []uint32 {
	off := int(node) * nb.nodeWords
	return nb.words[off : off+nb.nodeWords : off+nb.nodeWords]
}

// wordBytes is w's memory as bytes.
func wordBytes(w []uint32) []uint8 {
	return unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(w))), 4*len(w))
}

// wordFloats is w's memory as float32s.
func wordFloats(w []uint32) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(w))), len(w))
}

// blockNeighbours marks node's unvisited coded neighbours visited and
// estimates them from node's record: it returns them in sc.pending with
// their 1-bit estimates and bounds in sc.est and sc.bound.
func (rq *rabitqCodes) blockNeighbours(sc *rabitqScratch, node uint32) []uint32 {
	nb := rq.blocks
	rec := nb.record(node)
	pending, est, bound := sc.pending[:0], sc.est[:0], sc.bound[:0]
	for b := 0; b < nb.blocks; b++ {
		blk := rec[b*nb.blockWords : (b+1)*nb.blockWords]
		f := blk[nb.codeWords:]
		ids := f[blockIDs : blockIDs+32]
		if ids[0] == emptySlot {
			break // slots fill in order: this block and the next are empty
		}
		kernels.FastScan32(sc.query.LUT, wordBytes(blk[:nb.codeWords]), &sc.fast)
		ff := wordFloats(f[:blockCluster])
		for j, id := range ids {
			if id == emptySlot || sc.visited.visit(id) {
				continue
			}
			e, bd := sc.query.EstimateFast(sc.fast[j], ff[blockAdd+j], ff[blockRescale+j], ff[blockErr+j], ff[blockSum+j], f[blockCluster+j])
			pending, est, bound = append(pending, id), append(est, e), append(bound, bd)
		}
	}
	sc.estimate += int64(len(pending))
	sc.pending, sc.est, sc.bound = pending, est, bound
	return pending
}

// rowNeighbours is blockNeighbours on the code rows: one BitDotU8Rows of
// the unvisited neighbours in node's link list.
func (rq *rabitqCodes) rowNeighbours(g *graph, sc *rabitqScratch, node uint32) []uint32 {
	pending := rq.unvisited(g, sc, node, 0)
	sums := rq.sums(sc, pending)
	est, bound := sc.est[:0], sc.bound[:0]
	for i, nb := range pending {
		e, bd := sc.query.Estimate1(sums[i], rq.factors1(nb))
		est, bound = append(est, e), append(bound, bd)
	}
	sc.est, sc.bound = est, bound
	return pending
}
