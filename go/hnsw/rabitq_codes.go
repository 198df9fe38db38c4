package hnsw

import (
	"fmt"
	"math"
	"sync"

	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/quant/rabitq"
)

// rabitqCodes are RaBitQ codes of every node of one graph generation, in
// node order (see package rabitq for the codes and the estimator):
//
//	rows  []uint64          node i at [i*stride, (i+1)*stride), stride = words + 3:
//	                        its 1-bit code (words = D/64), then its 1-bit factors
//	                        Add, Rescale, Err, Sum, QErr as float32 bits and the
//	                        centroid number as a uint32, two to a word (low half first)
//	ex    []uint8           node i at [i*padded, (i+1)*padded): B-bit code (B > 1 only)
//	fx    []rabitq.Factors  node i's B-bit factors (B > 1 only)
//
// A code and its factors share a row so that estimating a neighbour reads
// one or two adjacent cache lines (88 bytes at D = 512), prefetched before
// the kernel runs.
//
// They describe the graph as it was when BuildRaBitQ ran: searches use them
// only while the graph generation and the count of inserted nodes are the
// same (rabitqFor), and otherwise search the float vectors as before.
type rabitqCodes struct {
	g        *graph
	n        int   // nodes coded: [0, n)
	trained  int   // nodes q was fitted to
	progress int64 // Index.progress when coded
	q        *rabitq.Quantizer
	words    int // uint64 words per 1-bit code
	stride   int // uint64 words per row: words + rowFactorWords
	padded   int // bytes per B-bit code
	rows     []uint64
	ex       []uint8
	fx       []rabitq.Factors
	// planes are the extended codes of a codes-only index as bit planes
	// (rabitq_codesonly.go), in place of ex, and exTerms their factors
	// Add and Rescale, two per node, in place of fx (its searches use no
	// bound, Σuᵢ is counted from the planes, the centroid is the row's).
	planes  []uint64
	exTerms []float32
	// qg is the quantized graph searches run on instead of the HNSW graph
	// (Config.RaBitQLayout = LayoutQG, rabitq_qg.go), or nil.
	qg *qgRows
	// blocks are the level-0 neighbour records the traversal reads
	// (rabitq_blocks.go); nil searches the rows one neighbour at a time.
	blocks *neighbourBlocks
	// blockScanMin is the fewest new neighbours of a block worth its
	// FastScan: below it they are estimated from their code rows.
	blockScanMin int
	pool         sync.Pool // *rabitqScratch
	// codesOnly makes searches read no float vector: the answer is the top
	// k by extended estimates (the mode an index without float vectors
	// will search; set by tests and benchmarks for now).
	codesOnly bool
	// refineOnExpand refines a node when the traversal expands it (if its
	// lower bound can still beat the k-th refined distance), as SymphonyQG
	// scores each visited node, instead of when it is first estimated: fewer
	// refinements, the traversal ordered by 1-bit estimates alone.
	refineOnExpand bool
	// expanded searches the blocks with searchRaBitQExpanded (SymphonyQG's
	// loop: exact distances of expanded nodes only); it needs the blocks
	// and the float vectors, and is ignored without either.
	expanded bool
}

// BuildRaBitQ codes every node of the index with RaBitQ: 1-bit codes for
// the traversal and, for bits in [2, 8], bits-bit codes for re-ranking
// (bits = 1: re-rank with the float vectors). From then on, searches that
// plan a graph traversal (filtered or not) run on the codes (searchRaBitQ)
// until the graph changes (Add, Compact, Renumber), after which they use the
// float vectors again until BuildRaBitQ runs again (an index with
// Config.RaBitQBits recodes by itself instead, rabitq_keep.go). The index must keep its
// float vectors (QuantNone); the rotation is drawn from Config.Seed and the
// codes are residuals of k-means centroids of the stored vectors
// (rabitqClusters).
func (x *Index) BuildRaBitQ(bits int) error { return x.buildRaBitQ(bits, false) }

// BuildRaBitQBlocks is BuildRaBitQ that also stores each node's level-0
// neighbours' 1-bit codes beside its links (SymphonyQG's layout,
// rabitq_blocks.go), so that expanding a node is one contiguous read
// scored 32 neighbours at a time by kernels.FastScan32. It is not the
// default because it has not paid for itself yet: at 100k x 512 (M 16) it
// searched 7-10 % faster than the rows at equal recall but took 6.5x the
// code memory (3,392 bytes per node against 600), it was slower than the
// rows at fashion-mnist's 784 dimensions, and every graph change rebuilds
// the blocks of the whole graph (bench/results/rabitq-go/).
func (x *Index) BuildRaBitQBlocks(bits int) error { return x.buildRaBitQ(bits, true) }

func (x *Index) buildRaBitQ(bits int, blocks bool) error {
	if err := x.acquire(); err != nil {
		return err
	}
	defer x.closeMu.RUnlock()
	if x.cfg.Quantization != QuantNone {
		return fmt.Errorf("%w: rabitq codes are built from float vectors; the index is %s", ErrInvalidArgument, x.cfg.Quantization)
	}
	if x.codesOnly() {
		return fmt.Errorf("%w: BuildRaBitQ codes float vectors", ErrCodesOnly)
	}
	if x.cfg.Metric == metric.Manhattan {
		return fmt.Errorf("%w: rabitq codes do not estimate the l1 metric", ErrInvalidArgument)
	}
	if bits < 1 || bits > rabitq.MaxBits {
		return fmt.Errorf("%w: rabitq bits must be in [1, %d], got %d", ErrInvalidArgument, rabitq.MaxBits, bits)
	}
	x.writeMu.Lock()
	defer x.writeMu.Unlock()
	if err := x.checkDeferred(); err != nil {
		return fmt.Errorf("hnsw: BuildRaBitQ: %w", err)
	}
	x.rabitqBlocks = blocks
	return x.buildRaBitQLocked(bits)
}

// buildRaBitQLocked fits a quantizer of bits bits to the stored vectors
// and codes every node with it. Callers hold writeMu.
func (x *Index) buildRaBitQLocked(bits int) error {
	g := x.graph.Load()
	n := g.count
	m := rabitq.L2
	if x.cfg.Metric != metric.L2 {
		m = rabitq.InnerProduct // hnsw's ip and cosine distances are 1 − dot
	}
	clusters := rabitqClusters(n)
	if x.cfg.RaBitQLayout == LayoutQG {
		clusters = 1 // the quantized graph's codes are residuals of nodes; the rows only back it up
	}
	q, err := rabitq.NewClustered(x.cfg.Dim, m, bits, x.cfg.Seed, g.vectors[:n*x.cfg.Dim], clusters)
	if err != nil {
		return fmt.Errorf("hnsw: %w", err)
	}
	x.rabitq.Store(x.codeRaBitQ(g, q, n, nil))
	return nil
}

// codeRaBitQ returns the codes of g's nodes under q, fitted to trained
// nodes: prev's rows for the nodes it coded (prev nil, or coding a prefix
// of g's nodes with q under the same numbering) and new ones for the rest,
// appended in place of prev's arrays where they have room (searches on
// prev read only its own nodes' rows).
func (x *Index) codeRaBitQ(g *graph, q *rabitq.Quantizer, trained int, prev *rabitqCodes) *rabitqCodes {
	n := g.count
	rq := &rabitqCodes{g: g, n: n, trained: trained, progress: x.progress.Load(), q: q, words: q.Words(), padded: q.Padded()}
	rq.stride = rq.words + rowFactorWords
	from := 0
	if prev != nil {
		from = prev.n
		rq.rows = append(prev.rows[:from*rq.stride], make([]uint64, (n-from)*rq.stride)...)
		if prev.ex != nil {
			rq.ex = append(prev.ex[:from*rq.padded], make([]uint8, (n-from)*rq.padded)...)
			rq.fx = append(prev.fx[:from], make([]rabitq.Factors, n-from)...)
		}
	} else {
		rq.rows = make([]uint64, n*rq.stride)
		if q.Bits() > 1 {
			rq.ex = make([]uint8, n*rq.padded)
			rq.fx = make([]rabitq.Factors, n)
		}
	}
	// The quantized graph codes every edge from its ends' rotations
	// (qgRows.fill): they are computed once, and the rows are coded from
	// them too when both quantizers rotate alike (they do unless a file's
	// codes were written with another rotation).
	var qgq *rabitq.Quantizer
	var rotated []float32
	if x.cfg.RaBitQLayout == LayoutQG {
		qgq = x.qgQuantizer(q.Padded())
		var release func()
		rotated, release = scratchFloats(n * rq.padded) // read only until codeRaBitQ returns
		defer release()
		rotateAll(qgq, g, n, rotated)
	}
	rowsRotated := qgq != nil && q.SameRotation(qgq)
	rabitqParts(n-from, func(lo, hi int) {
		e := q.NewEncoder()
		D := rq.padded
		for i := from + lo; i < from+hi; i++ {
			var ex []uint8
			if rq.ex != nil {
				ex = rq.ex[i*rq.padded : (i+1)*rq.padded]
			}
			row := rq.rows[i*rq.stride : (i+1)*rq.stride]
			var f1, fx rabitq.Factors
			if rowsRotated {
				f1, fx = e.EncodeRotated(rotated[i*D:(i+1)*D], row[:rq.words], ex)
			} else {
				f1, fx = e.Encode(g.vector(uint32(i)), row[:rq.words], ex)
			}
			packFactors(row[rq.words:], f1)
			if rq.fx != nil {
				rq.fx[i] = fx
			}
		}
	})
	if x.rabitqBlocks {
		rq.buildBlocks(g)
	}
	if qgq != nil {
		rq.qg = x.buildQGRotated(g, n, qgq, rotated)
	}
	rq.expanded = x.expandsExactly(rq)
	rq.pool.New = newRaBitQScratch(q, rq.blocks != nil)
	return rq
}

// withoutBlocks returns a copy of rq whose search reads the code rows one
// neighbour at a time (the layout before the neighbour blocks), for tests
// and benchmarks comparing the two.
func (rq *rabitqCodes) withoutBlocks() *rabitqCodes {
	c := &rabitqCodes{g: rq.g, n: rq.n, progress: rq.progress, q: rq.q, words: rq.words, stride: rq.stride,
		padded: rq.padded, rows: rq.rows, ex: rq.ex, fx: rq.fx, planes: rq.planes, exTerms: rq.exTerms, codesOnly: rq.codesOnly, refineOnExpand: rq.refineOnExpand, expanded: rq.expanded}
	c.pool.New = newRaBitQScratch(rq.q, false)
	return c
}

// withBlocks returns a copy of rq on the same blocks, for tests and
// benchmarks that change a search setting of the copy only.
func (rq *rabitqCodes) withBlocks() *rabitqCodes {
	c := &rabitqCodes{g: rq.g, n: rq.n, progress: rq.progress, q: rq.q, words: rq.words, stride: rq.stride,
		padded: rq.padded, rows: rq.rows, ex: rq.ex, fx: rq.fx, planes: rq.planes, exTerms: rq.exTerms, blocks: rq.blocks, blockScanMin: rq.blockScanMin,
		codesOnly: rq.codesOnly, refineOnExpand: rq.refineOnExpand, expanded: rq.expanded}
	c.pool.New = newRaBitQScratch(rq.q, rq.blocks != nil)
	return c
}

// expandsExactly says whether searches on rq run searchRaBitQExpanded: on
// an index created with Config.RaBitQBits = 1 (a door's default) whose
// codes have at least expandedMinDims dimensions; its codes then carry the
// neighbour blocks. At 20k x 512 (pypi-use512, BenchmarkRaBitQSweep, four
// runs on a machine at load 20-55) it read half the float vectors of
// searchRaBitQ on the same blocks (47 against 93 a query at ef 48) and a
// fifth fewer bytes, for 0.94-1.34x its CPU-time QPS at recall 0.95
// (bench/results/rabitq-go/), and a lower recall at large ef (0.9926
// against 0.9950 at ef 256). The blocks cost 4·D + 768 bytes per node
// (2,816 at D = 512), more than the float vector. Indexes coded by hand
// (BuildRaBitQ, BuildRaBitQBlocks) keep searchRaBitQ.
func (x *Index) expandsExactly(rq *rabitqCodes) bool {
	return x.cfg.RaBitQBits == 1 && rq.blocks != nil && rq.ex == nil && rq.padded >= expandedMinDims
}

// expandedMinDims is the fewest code dimensions (padded) for which a 1-bit
// index searches expanded: the beam is ordered by 1-bit estimates, whose
// error shrinks as 1/sqrt(D), and on clustered Gaussian data of 96
// dimensions (128 coded) the expanded search fell 0.05 below the float
// graph's recall at equal ef, against 0.03 at 256 and 0.005-0.013 on
// pypi-use512.
const expandedMinDims = 256

// rabitqEpsilon is ε₀ of the search's lower bounds (rabitq.Epsilon0).
var rabitqEpsilon float32 = rabitq.Epsilon0

// newRaBitQScratch returns the pool constructor of q's search scratch;
// fastScan prepares queries for the neighbour blocks too.
func newRaBitQScratch(q *rabitq.Quantizer, fastScan bool) func() any {
	return func() any {
		qq := q.NewQuery()
		qq.SetEpsilon(rabitqEpsilon)
		if fastScan {
			qq.EnableFastScan()
		}
		return &rabitqScratch{query: qq}
	}
}

// DropRaBitQ discards the RaBitQ codes: searches use the float vectors.
// A codes-only index, which has nothing else to search, keeps them.
func (x *Index) DropRaBitQ() {
	if !x.codesOnly() {
		x.rabitq.Store(nil)
	}
}

// rabitqFor returns the RaBitQ codes if they describe g as it is now.
func (x *Index) rabitqFor(g *graph) *rabitqCodes {
	rq := x.rabitq.Load()
	if rq == nil || rq.g != g || rq.progress != x.progress.Load() {
		return nil
	}
	return rq
}

// rabitqClusters is the number of centroids of n nodes' codes: one per
// thousand nodes, between 1 and 64 (rabitqlib's examples use 256 for 1M).
// More centroids shorten the residuals, and so the estimates' errors, at
// the price of one distance per centroid per query.
func rabitqClusters(n int) int {
	if rabitqClustersOverride > 0 {
		return rabitqClustersOverride
	}
	return min(max(n/1000, 1), 64)
}

// rabitqClustersOverride, when positive, replaces rabitqClusters' count
// (benchmarks comparing centroid counts set it).
var rabitqClustersOverride int

// rowFactorWords is the room of the 1-bit factors at the end of a row.
const rowFactorWords = 3

func packFactors(dst []uint64, f rabitq.Factors) {
	dst = dst[:rowFactorWords]
	dst[0] = uint64(math.Float32bits(f.Add)) | uint64(math.Float32bits(f.Rescale))<<32
	dst[1] = uint64(math.Float32bits(f.Err)) | uint64(math.Float32bits(f.Sum))<<32
	dst[2] = uint64(math.Float32bits(f.QErr)) | uint64(f.Cluster)<<32
}

// factors1 returns node's 1-bit factors from its row.
func (rq *rabitqCodes) factors1(node uint32) rabitq.Factors {
	w := rq.rows[int(node)*rq.stride+rq.words:][:rowFactorWords]
	return rabitq.Factors{
		Add: math.Float32frombits(uint32(w[0])), Rescale: math.Float32frombits(uint32(w[0] >> 32)),
		Err: math.Float32frombits(uint32(w[1])), Sum: math.Float32frombits(uint32(w[1] >> 32)),
		QErr: math.Float32frombits(uint32(w[2])), Cluster: uint32(w[2] >> 32),
	}
}

// RaBitQBytes is the memory the RaBitQ codes and factors take (0 without
// codes): per node (D/64 + 3)·8 bytes, plus ⌈2M/32⌉·(4·D + 768) for its
// neighbour record, plus with extended codes D + 20 and the record's head
// (D + 24 rounded up to 64 bytes): 4,012 bytes at D = 512, M = 16, 8 bits.
func (x *Index) RaBitQBytes() int {
	rq := x.rabitq.Load()
	if rq == nil {
		return 0
	}
	const factorBytes = 20 // rabitq.Factors: five float32s
	n := len(rq.rows)*8 + len(rq.ex) + len(rq.planes)*8 + len(rq.fx)*factorBytes + len(rq.exTerms)*4
	if rq.blocks != nil {
		n += len(rq.blocks.words) * 4
	}
	if rq.qg != nil {
		n += rq.qg.bytes()
	}
	return n
}
