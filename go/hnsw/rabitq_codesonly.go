package hnsw

import (
	"fmt"
	"math/bits"
	"runtime/debug"

	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/quant/rabitq"
)

// A codes-only index (Config.RaBitQCodesOnly) keeps no float vectors: its
// graph is built on the float vectors of its one Add, which are then
// coded and dropped, and every search runs on the codes, re-ranking with
// the extended codes and reporting their estimates as distances. What it
// keeps per node is the graph, the code row (1-bit code and factors, as
// every RaBitQ index) and, instead of the extended code's D bytes, its
// B−1 low bit planes: the top bit of an extended code is the 1-bit code
// (package rabitq), so
//
//	planes []uint64   node i at [i*(B−1)*words, (i+1)*(B−1)*words): plane j
//	                  (j = 0 … B−2) holds bit j of each uᵢ, dimension i at
//	                  bit i%64 of word i/64, as a 1-bit code
//
// and Σ uᵢ·qᵢ = 2^(B−1)·BitDot(code) + Σⱼ 2^j·BitDot(plane j): B runs of
// kernels.BitDotU8, the same integer DotU8 gives on the byte codes, so
// its estimates are those of an index keeping floats, exactly. Of the
// extended code's factors it keeps Add and Rescale (exTerms): it reports
// the estimates, so it needs no error bound, Σuᵢ is counted from the
// planes and the centroid is the code row's. At D = 512, B = 3: 88 + 128 +
// 8 bytes of codes and factors per node against 2,048 of float vector.
//
// Placing a later vector in the graph needs the distances between stored
// vectors, which the codes only estimate, so a second Add, Compact and
// Renumber fail with ErrCodesOnly, as does GetVectors; Remove works
// (tombstones are never returned).

// ErrCodesOnly marks a call that needs the float vectors a codes-only
// index does not keep. It wraps ErrInvalidArgument.
var ErrCodesOnly = fmt.Errorf("%w: the index keeps rabitq codes only (no float vectors)", ErrInvalidArgument)

// codesOnly says whether x keeps no float vectors once built.
func (x *Index) codesOnly() bool { return x.cfg.RaBitQCodesOnly }

// refuseCodesOnly fails a call named what on a codes-only index holding
// nodes; need says what it would need the float vectors for.
func (x *Index) refuseCodesOnly(g *graph, what, need string) error {
	if x.codesOnly() && g.count > 0 {
		return fmt.Errorf("%w: %s needs them to %s", ErrCodesOnly, what, need)
	}
	return nil
}

// dropFloats ends the first Add of a codes-only index: the extended codes
// become bit planes and a graph generation without vectors, coded by
// them, is swapped in. Searches already running on the old generation
// finish on its vectors. Callers hold writeMu.
func (x *Index) dropFloats() error {
	g := x.graph.Load()
	rq := x.rabitqFor(g)
	if rq == nil || rq.ex == nil || rq.blocks != nil {
		return fmt.Errorf("hnsw: codes-only index of %d nodes has no extended codes to keep", g.count)
	}
	ng := g.withoutFloats()
	c := &rabitqCodes{g: ng, n: rq.n, trained: rq.trained, progress: rq.progress, q: rq.q, words: rq.words,
		stride: rq.stride, padded: rq.padded, rows: rq.rows, codesOnly: true}
	c.planes = packPlanes(rq.ex, rq.n, rq.padded, rq.q.Bits())
	c.exTerms = exTermsOf(rq.fx)
	c.pool.New = newRaBitQScratch(rq.q, false)
	x.rabitq.Store(c) // before the graph: a search loading ng finds c current
	x.graph.Store(ng)
	// The float vectors (and the build's larger arrays) are garbage now,
	// most of the memory the index held: give it back to the system
	// instead of keeping it as heap headroom (searches still running on
	// the old generation keep what they read until they finish).
	debug.FreeOSMemory()
	return nil
}

// exact is a copy of s at its length, without spare capacity.
func exact[T any](s []T) []T {
	out := make([]T, len(s))
	copy(out, s)
	return out
}

// withoutFloats is g without its vectors and without the level-0
// spanning tree (parent), which only insertions use and a codes-only
// index takes no more of; its other arrays are copied at their exact
// size, dropping the capacity the build grew them with (no insertion
// runs: the caller holds writeMu).
func (g *graph) withoutFloats() *graph {
	n := g.count
	ng := &graph{dim: g.dim, m: g.m, m0: g.m0, stride0: g.stride0, strideUp: g.strideUp, count: n,
		level0: exact(g.level0[:n*g.stride0]), upper: exact(g.upper[:g.upperUsed]), upperStart: exact(g.upperStart[:n]),
		upperUsed: g.upperUsed, levels: exact(g.levels[:n]), labels: exact(g.labels[:n]), flags: exact(g.flags[:n])}
	if g.rank != nil {
		ng.rank = exact(g.rank[:n])
	}
	ng.setRowGeometry()
	ng.entry.Store(g.entry.Load())
	ng.settled.Store(g.settled.Load())
	return ng
}

// packPlanes returns the B−1 low bit planes of n extended codes of padded
// bytes each.
func packPlanes(ex []uint8, n, padded, B int) []uint64 {
	words := padded / 64
	per := (B - 1) * words
	planes := make([]uint64, n*per)
	inParts(n, func(lo, hi int) {
		for node := lo; node < hi; node++ {
			code, out := ex[node*padded:(node+1)*padded], planes[node*per:(node+1)*per]
			for i, u := range code {
				for j := 0; j < B-1; j++ {
					out[j*words+i>>6] |= uint64(u>>j&1) << (i & 63)
				}
			}
		}
	})
	adviseHugePages(planes)
	return planes
}

// unpackPlanes is packPlanes' inverse for node: its extended code into ex
// (padded bytes), its top bits from its code row.
func (rq *rabitqCodes) unpackPlanes(node uint32, ex []uint8) {
	B := rq.q.Bits()
	per := (B - 1) * rq.words
	planes := rq.planes[int(node)*per:][:per]
	top := rq.rows[int(node)*rq.stride:][:rq.words]
	for i := range ex[:rq.padded] {
		u := uint8(top[i>>6]>>(i&63)&1) << (B - 1)
		for j := 0; j < B-1; j++ {
			u |= uint8(planes[j*rq.words+i>>6]>>(i&63)&1) << j
		}
		ex[i] = u
	}
}

// planeDot is Σ uᵢ·qᵢ of node's extended code, from its code row's top
// bits and its planes: what kernels.DotU8 computes on the byte code.
func (rq *rabitqCodes) planeDot(sc *rabitqScratch, node uint32) uint32 {
	return planeDot(rq.rows, rq.planes, rq.words, rq.stride, rq.q.Bits(), sc.query.Code, node)
}

// planeDot is Σ uᵢ·qᵢ of node's B-bit code held as its code row's top
// bits (rows of stride words, words of code) and B−1 planes.
func planeDot(rows, planes []uint64, words, stride, B int, q []uint8, node uint32) uint32 {
	per := (B - 1) * words
	own := planes[int(node)*per:][:per]
	s := kernels.BitDotU8(rows[int(node)*stride:][:words], q) << (B - 1)
	for j := 0; j < B-1; j++ {
		s += kernels.BitDotU8(own[j*words:(j+1)*words], q) << j
	}
	return s
}

// exTermsOf is the Add and Rescale of each extended code's factors, the
// two a codes-only index keeps (rabitqCodes.exTerms).
func exTermsOf(fx []rabitq.Factors) []float32 {
	terms := make([]float32, 2*len(fx))
	for i, f := range fx {
		terms[2*i], terms[2*i+1] = f.Add, f.Rescale
	}
	return terms
}

// planeSum is Σ uᵢ of node's extended code (rabitq.Factors.Sum), counted
// from its code row's top bits and its planes.
func (rq *rabitqCodes) planeSum(node uint32) uint32 {
	B := rq.q.Bits()
	per := (B - 1) * rq.words
	own := rq.planes[int(node)*per:][:per]
	var sum uint32
	for _, w := range rq.rows[int(node)*rq.stride:][:rq.words] {
		sum += uint32(bits.OnesCount64(w)) << (B - 1)
	}
	for j := 0; j < B-1; j++ {
		for _, w := range own[j*rq.words : (j+1)*rq.words] {
			sum += uint32(bits.OnesCount64(w)) << j
		}
	}
	return sum
}

// refinePlanes is refineOne on a codes-only index: the extended estimate,
// without a bound (nothing re-ranks after it).
func (rq *rabitqCodes) refinePlanes(sc *rabitqScratch, node uint32) float32 {
	sc.refine++
	sc.bytes += 8*int64((rq.q.Bits()-1)*rq.words) + 8
	row := rq.rows[int(node)*rq.stride+rq.words:][:rowFactorWords]
	d := sc.query.EstimateExTerms(rq.planeDot(sc, node), rq.planeSum(node), rq.exTerms[2*node], rq.exTerms[2*node+1], uint32(row[2]>>32))
	sc.lastLower = d
	return d
}

// scanRaBitQ is scan on a codes-only index: every admitted node's
// extended estimate, the k nearest by it.
func (x *Index) scanRaBitQ(rq *rabitqCodes, g *graph, s *searcher, q []float32, k int, adm *admission) []candidate {
	sc := rq.pool.Get().(*rabitqScratch)
	sc.estimate, sc.refine, sc.exact, sc.bytes = 0, 0, 0, 0
	sc.query.Prepare(q)
	s.results = s.results[:0]
	consider := func(node uint32) {
		if int(node) >= rq.n || !g.isReady(node) {
			return
		}
		d := rq.refinePlanes(sc, node)
		if len(s.results) < k {
			s.results.push(candidate{d, node})
		} else if d < s.results[0].dist {
			s.results.replaceTop(candidate{d, node})
		}
	}
	if adm.allow == nil {
		for node := 0; node < rq.n; node++ {
			consider(uint32(node))
		}
	} else {
		for w, word := range adm.allow {
			for word != 0 {
				consider(uint32(w)<<6 | uint32(bits.TrailingZeros64(word)))
				word &= word - 1
			}
		}
	}
	s.ndis += sc.refine
	s.nrefine += sc.refine
	rq.pool.Put(sc)
	sortAscending(s.results)
	return s.results
}

// codesOf returns the codes a search of g runs on: rabitqFor's, or on a
// codes-only graph (which has nothing else to search) its codes however
// stale; nil for a float graph without current codes.
func (x *Index) codesOf(g *graph) *rabitqCodes {
	if rq := x.rabitqFor(g); rq != nil || g.floats || g.sq != nil {
		return rq
	}
	if rq := x.rabitq.Load(); rq != nil && rq.g == g {
		return rq
	}
	return nil
}
