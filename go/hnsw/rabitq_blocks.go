package hnsw

import (
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/quant/rabitq"
)

// neighbourBlocks hold, for every coded node, the 1-bit codes and factors of
// its level-0 neighbours beside their ids, in the layout of SymphonyQG
// (Gao & Long, SIGMOD 2025, RaBitQ-Library's symqg): expanding a node during
// the search is one contiguous read of its record, and its neighbours are
// estimated 32 at a time by kernels.FastScan32 instead of one scattered code
// row each.
//
//	words []uint32   node i's record at [i*nodeWords, (i+1)*nodeWords),
//	                 nodeWords = headWords + blocks·blockWords, blocks = ⌈m0/32⌉
//	the head (extended codes only; headWords = 0 without them): node i's own
//	  B-bit code (D bytes), then its extended factors Add, Rescale, Err, Sum,
//	  QErr (float32 bits) and Cluster, padded to a multiple of 64 bytes
//	  (headWords = 144 at D = 512)
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
// on it never reads the link list, and the node's own extended code, so
// refining the node it expands (SymphonyQG scores each visited node) reads
// the lines the expansion reads anyway. At D = 512, m0 = 32, 8 bits: 3,392
// bytes per node (53 cache lines), against 88 bytes per node for the code
// rows and D + 24 for the extended codes (which the rows layout and the
// refinement of discovered neighbours still read from rabitqCodes.ex).
//
// The blocks are derived from the code rows and the graph and built with
// them (BuildRaBitQ, or Load when a file has codes but no blocks); like the
// rows they describe one graph generation, so Add, Compact and Renumber
// make the search fall back to the float vectors until BuildRaBitQ runs
// again. Remove changes no link list (a tombstone keeps routing), so the
// blocks stay valid across it.
type neighbourBlocks struct {
	headWords  int // per node: its own extended code and factors
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

func newNeighbourBlocks(g *graph, padded, n int, extended bool) *neighbourBlocks {
	nb := &neighbourBlocks{blocks: (g.m0 + 31) / 32, codeWords: padded}
	if extended {
		nb.headWords = (padded/4 + exFactorWords + 15) / 16 * 16
	}
	nb.blockWords = nb.codeWords + blockFactorWords
	nb.nodeWords = nb.headWords + nb.blocks*nb.blockWords
	nb.words = make([]uint32, n*nb.nodeWords)
	adviseHugePages(nb.words) // each expansion reads one record, anywhere in the array
	return nb
}

// buildBlocks fills rq.blocks from rq's code rows and g's level-0 links.
// The caller holds Index.writeMu, so no link list changes meanwhile.
func (rq *rabitqCodes) buildBlocks(g *graph) {
	nb := newNeighbourBlocks(g, rq.padded, rq.n, rq.ex != nil)
	rabitqParts(rq.n, func(lo, hi int) {
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
	if nb.headWords > 0 {
		head := rec[:nb.headWords]
		copy(wordBytes(head), rq.ex[int(node)*rq.padded:][:rq.padded])
		f := rq.fx[node]
		copy(head[rq.padded/4:], []uint32{math.Float32bits(f.Add), math.Float32bits(f.Rescale),
			math.Float32bits(f.Err), math.Float32bits(f.Sum), math.Float32bits(f.QErr), f.Cluster})
	}
	var slots [32][]uint64
	for b := 0; b < nb.blocks; b++ {
		blk := nb.block(rec, b)
		f := blk[nb.codeWords:]
		for j := 0; j < 32; j++ {
			slot := 32*b + j
			id := emptySlot
			if slot < count {
				id = atomic.LoadUint32(&links[1+slot])
			}
			slots[j] = nil
			if id == emptySlot || int(id) >= rq.n {
				f[blockIDs+j] = emptySlot
				continue
			}
			slots[j] = rq.rows[int(id)*rq.stride:][:rq.words]
			fac := rq.factors1(id)
			f[blockAdd+j] = math.Float32bits(fac.Add)
			f[blockRescale+j] = math.Float32bits(fac.Rescale)
			f[blockErr+j] = math.Float32bits(fac.Err)
			f[blockSum+j] = math.Float32bits(fac.Sum)
			f[blockCluster+j] = fac.Cluster
			f[blockIDs+j] = id
		}
		kernels.FastScanPackBlock(wordBytes(blk[:nb.codeWords]), rq.words, &slots)
	}
}

// record returns node's record.
func (nb *neighbourBlocks) record(node uint32) []uint32 {
	off := int(node) * nb.nodeWords
	return nb.words[off : off+nb.nodeWords : off+nb.nodeWords]
}

// block returns block b of record rec.
func (nb *neighbourBlocks) block(rec []uint32, b int) []uint32 {
	off := nb.headWords + b*nb.blockWords
	return rec[off : off+nb.blockWords : off+nb.blockWords]
}

// refineHead is the extended estimate of node from the head of its record
// (the lines its expansion reads), as refineOne computes it from rq.ex.
func (rq *rabitqCodes) refineHead(sc *rabitqScratch, node uint32) float32 {
	head := rq.blocks.record(node)[:rq.blocks.headWords]
	w := head[rq.padded/4:]
	f := rabitq.Factors{Add: math.Float32frombits(w[0]), Rescale: math.Float32frombits(w[1]), Err: math.Float32frombits(w[2]),
		Sum: math.Float32frombits(w[3]), QErr: math.Float32frombits(w[4]), Cluster: w[5]}
	sc.refine++
	d, bound := sc.query.EstimateEx(kernels.DotU8(wordBytes(head)[:rq.padded], sc.query.Code), f)
	sc.lastLower = d - bound
	return d
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
		blk := nb.block(rec, b)
		f := blk[nb.codeWords:]
		ids := f[blockIDs : blockIDs+32]
		if ids[0] == emptySlot {
			break // slots fill in order: this block and the next are empty
		}
		// Visit first: a block whose neighbours were all seen (common late
		// in a search) costs its ids, not the kernel and its codes.
		sc.bytes += 4 * blockFactorWords
		start := len(pending)
		for _, id := range ids {
			if id != emptySlot && !sc.visited.visit(id) {
				pending = append(pending, id)
			}
		}
		if len(pending) == start {
			continue
		}
		if len(pending)-start < rq.blockScanMin {
			// Few new neighbours: their code rows (88 bytes each at D =
			// 512, cache-resident far longer than the 4·D bytes of the
			// block's codes) cost less than the block.
			sc.est, sc.bound = est, bound
			rq.rowEstimates(sc, pending[start:])
			est, bound = sc.est, sc.bound
			continue
		}
		sc.bytes += 4 * int64(nb.codeWords)
		kernels.FastScan32(sc.query.LUT, wordBytes(blk[:nb.codeWords]), &sc.fast)
		ff := wordFloats(f[:blockCluster])
		i := start
		for j, id := range ids {
			if i == len(pending) {
				break
			}
			if id != pending[i] {
				continue // empty, or visited before
			}
			i++
			e, bd := sc.query.EstimateFast(sc.fast[j], ff[blockAdd+j], ff[blockRescale+j], ff[blockErr+j], ff[blockSum+j], f[blockCluster+j])
			est, bound = append(est, e), append(bound, bd)
		}
	}
	sc.estimate += int64(len(pending))
	sc.pending, sc.est, sc.bound = pending, est, bound
	return pending
}

// rowEstimates appends to sc.est and sc.bound the 1-bit estimates of
// nodes from their code rows (the 8-bit query), as rowNeighbours does.
func (rq *rabitqCodes) rowEstimates(sc *rabitqScratch, nodes []uint32) {
	kernels.PrefetchRows(unsafe.Pointer(unsafe.SliceData(rq.rows)), uintptr(rq.stride)*8, nodes, (rq.stride*8+63)/64)
	sums := rq.sums(sc, nodes)
	sc.estimate -= int64(len(nodes)) // counted with the block's
	sc.bytes += 8 * int64(rq.stride*len(nodes))
	for i, nb := range nodes {
		e, bd := sc.query.Estimate1(sums[i], rq.factors1(nb))
		sc.est, sc.bound = append(sc.est, e), append(sc.bound, bd)
	}
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
