package hnsw

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/quant/rabitq"
)

// qgRows are the quantized graph of an index of Config.RaBitQLayout =
// LayoutQG, SymphonyQG's layout (Gao & Long, SIGMOD 2025; RaBitQ-Library's
// symqg/qg.hpp): a graph of fixed degree 32 without upper levels, entered
// at the medoid, whose node u has one contiguous row holding everything
// expanding u reads, so that a hop is one random read:
//
//	words []uint32   node u's row at [u*rowWords, (u+1)*rowWords), rowWords
//	                 a multiple of 16 (each row starts on a 64-byte line)
//	[0, dim)                 u's float vector
//	dim                      ‖u‖² (for the inner product's ‖q − u‖)
//	[dim+1, vecWords)        zero: vecWords is dim + 1 rounded up to 16
//	[vecWords, +32)          its 32 neighbour ids, emptySlot past its degree
//	[idsEnd, +D)             the neighbours' 1-bit codes relative to u, in
//	                         kernels.FastScan32's block layout (4·D bytes)
//	[codesEnd, +96)          per neighbour float32 Add, Rescale, Sum
//	                         (rabitq.EncodeResidual), 32 of each
//
// At D = dim = 512: 4,672 bytes per node (73 lines) against 2,048 for the
// float vector alone; at dim = 100 (D = 128) 1,472 (23 lines). The codes'
// error bounds (Factors.Err) are not stored: the search orders its buffer
// by the estimates alone and measures every node it expands, so no bound
// is ever read. At low dimension the 32 neighbours' factors are a large
// share of a row (a third at dim = 100, where the bound and a line of its
// own for ‖u‖² made rows of 1,664 bytes), and a hop reads the whole row.
//
// The codes are residuals of the node being expanded, not of centroids
// (rabitq/residual.go): the query's terms of u are its exact distance to
// u, which the search measures anyway, and the residuals are edges, much
// shorter than distances to centroids, so the estimates are tighter.
//
// The neighbours are u's level-0 HNSW links (heuristically pruned, usually
// fewer than 32) filled to 32 with the nearest of their own links that u
// does not link yet, as SymphonyQG's builder fills its rows with the
// candidates its pruning dropped: every slot of the FastScan block is paid
// for, so every slot carries an edge.
//
// Like the other codes the rows describe one graph generation (rabitqFor):
// Add, Compact and Renumber rebuild them (keepRaBitQ). Remove changes no
// row; a tombstone routes but is never returned (admission).
type qgRows struct {
	q        *rabitq.Quantizer // one centroid (the origin): only its rotation and query are used
	dim      int
	padded   int
	vecWords int
	rowWords int
	n        int
	entry    uint32 // the medoid: the node nearest to the mean
	words    []uint32
	pool     sync.Pool // *rabitqScratch
}

// qgDegree is the number of neighbours of every row: one FastScan block.
const qgDegree = 32

// The arrays after a row's codes, in words from their start.
const (
	qgAdd = 32 * iota
	qgRescale
	qgSum
	qgFactorWords
)

func newQGRows(q *rabitq.Quantizer, dim, n int) *qgRows {
	r := &qgRows{q: q, dim: dim, padded: q.Padded(), n: n}
	r.vecWords = (dim + 1 + 15) / 16 * 16 // the vector and ‖u‖²
	r.rowWords = r.vecWords + qgDegree + r.padded + qgFactorWords
	r.pool.New = func() any {
		qq := q.NewQuery()
		qq.SetEpsilon(rabitqEpsilon)
		qq.EnableFastScan()
		return &rabitqScratch{query: qq}
	}
	return r
}

func (r *qgRows) row(node uint32) []uint32 {
	off := int(node) * r.rowWords
	return r.words[off : off+r.rowWords : off+r.rowWords]
}

func (r *qgRows) ids(row []uint32) []uint32 { return row[r.vecWords : r.vecWords+qgDegree] }

func (r *qgRows) codes(row []uint32) []uint32 {
	return row[r.vecWords+qgDegree : r.vecWords+qgDegree+r.padded]
}

func (r *qgRows) factors(row []uint32) []uint32 {
	return row[r.vecWords+qgDegree+r.padded:]
}

// section is the content of the file's section RBQG: the entry, then
// every row's ids.
func (r *qgRows) section() []uint32 {
	out := make([]uint32, 1, 1+r.n*qgDegree)
	out[0] = r.entry
	for u := 0; u < r.n; u++ {
		out = append(out, r.ids(r.row(uint32(u)))...)
	}
	return out
}

// bytes is the memory of the rows.
func (r *qgRows) bytes() int { return 4 * len(r.words) }

// buildQG builds the quantized graph of g's first n nodes: neighbours
// (qgNeighbours), then every row's codes from the rotated vectors. The
// caller holds writeMu (or g is not yet visible), so no link changes.
func (x *Index) buildQG(g *graph, n, padded int) *qgRows {
	q := x.qgQuantizer(padded)
	rotated, release := scratchFloats(n * q.Padded()) // read only until buildQG returns
	defer release()
	rotateAll(q, g, n, rotated)
	return x.buildQGRotated(g, n, q, rotated)
}

// buildQGRotated is buildQG with q, the quantizer of x.qgQuantizer, and
// rotated, P·v of each of the n nodes under q (rotateAll).
func (x *Index) buildQGRotated(g *graph, n int, q *rabitq.Quantizer, rotated []float32) *qgRows {
	ids := x.qgNeighbours(g, n)
	return newQGRows(q, g.dim, n).fillRotated(g, ids, qgMedoid(g, n), rotated)
}

// rotateAll writes P·v of each of g's first n nodes under q to rotated
// (n·Padded values), on every core.
func rotateAll(q *rabitq.Quantizer, g *graph, n int, rotated []float32) {
	D := q.Padded()
	rabitqParts(n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			q.Rotate(g.vector(uint32(i)), rotated[i*D:(i+1)*D])
		}
	})
}

// qgQuantizer is the quantizer of the quantized graph: the index's
// rotation (Config.Seed) to padded dimensions (those of the index's other
// codes, so that a file's rows are rebuilt with the rotation they were
// written with) with the origin as its one centroid, which no code uses
// (they are residuals of nodes).
func (x *Index) qgQuantizer(padded int) *rabitq.Quantizer {
	m := rabitq.L2
	if x.dk != distL2 {
		m = rabitq.InnerProduct
	}
	q, err := rabitq.NewWithCentroidsPadded(x.cfg.Dim, padded, m, 1, x.cfg.Seed, make([]float32, x.cfg.Dim))
	if err != nil {
		panic("hnsw: rabitq quantizer of a validated config: " + err.Error()) // dim and padded were checked by the index's codes
	}
	return q
}

// fill writes the rows of r from g's vectors and the neighbour ids (n·32,
// emptySlot for none), with entry as the entry point.
func (r *qgRows) fill(g *graph, ids []uint32, entry uint32) *qgRows {
	rotated, release := scratchFloats(r.n * r.padded) // read only until fill returns
	defer release()
	rotateAll(r.q, g, r.n, rotated)
	return r.fillRotated(g, ids, entry, rotated)
}

// fillRotated is fill given rotated, P·v of each node under r.q
// (rotateAll).
func (r *qgRows) fillRotated(g *graph, ids []uint32, entry uint32, rotated []float32) *qgRows {
	n, D := r.n, r.padded
	r.entry = entry
	r.words = make([]uint32, n*r.rowWords)
	adviseHugePages(r.words)
	words := D / 64
	rotatedBase, rotatedBytes := unsafe.Pointer(unsafe.SliceData(rotated)), uintptr(4*D)
	rabitqParts(n, func(lo, hi int) {
		e := r.q.NewEncoder()
		codes := make([]uint64, qgDegree*words)
		var slots [32][]uint64
		for u := lo; u < hi; u++ {
			row := r.row(uint32(u))
			v := g.vector(uint32(u))
			copy(wordFloats(row[:r.vecWords]), v)
			copy(r.ids(row), ids[u*qgDegree:(u+1)*qgDegree])
			f := r.factors(row)
			var norm2 float32
			for _, a := range v {
				norm2 += a * a
			}
			row[r.dim] = math.Float32bits(norm2)
			ru := rotated[u*D : (u+1)*D]
			edges := ids[u*qgDegree : (u+1)*qgDegree]
			// The neighbours' rotations are scattered rows of 4·D bytes:
			// their first lines are requested together (slots past the
			// degree are emptySlot, at the end).
			valid := qgDegree
			for valid > 0 && edges[valid-1] == emptySlot {
				valid--
			}
			kernels.PrefetchRows(rotatedBase, rotatedBytes, edges[:valid], 2)
			for j, id := range edges {
				slots[j] = nil
				if id == emptySlot {
					continue
				}
				code := codes[j*words : (j+1)*words]
				fac := e.EncodeResidual(rotated[int(id)*D:(int(id)+1)*D], ru, code)
				slots[j] = code
				f[qgAdd+j] = math.Float32bits(fac.Add)
				f[qgRescale+j] = math.Float32bits(fac.Rescale)
				f[qgSum+j] = math.Float32bits(fac.Sum)
			}
			kernels.FastScanPackBlock(wordBytes(r.codes(row)), words, &slots)
		}
	})
	return r
}

// qgNeighbours returns the 32 neighbour slots of each of g's first n
// nodes: its level-0 links, then the nearest of its links' links (at most
// qgFillCandidates of them considered) it does not link to yet, then
// emptySlot when even those run out (graphs of few nodes).
func (x *Index) qgNeighbours(g *graph, n int) []uint32 {
	ids := make([]uint32, n*qgDegree)
	rabitqParts(n, func(lo, hi int) {
		var seen visitedSet
		var cands []candidate
		var s searcher // for distRows: the candidates' distances in one multi-row call
		pending := make([]uint32, 0, qgFillCandidates)
		for u := lo; u < hi; u++ {
			slots := ids[u*qgDegree : (u+1)*qgDegree]
			seen.reset(n)
			seen.visit(uint32(u))
			links := g.links(uint32(u), 0)
			count := int(atomic.LoadUint32(&links[0]))
			have := 0
			for i := 1; i <= count && have < qgDegree; i++ {
				if id := atomic.LoadUint32(&links[i]); int(id) < n && !seen.visit(id) {
					slots[have] = id
					have++
				}
			}
			if have < qgDegree {
				pending = pending[:0]
			fill:
				for _, nb := range slots[:have] {
					l2 := g.links(nb, 0)
					c2 := int(atomic.LoadUint32(&l2[0]))
					for i := 1; i <= c2; i++ {
						id := atomic.LoadUint32(&l2[i])
						if int(id) >= n || seen.visit(id) {
							continue
						}
						pending = append(pending, id)
						if len(pending) == qgFillCandidates {
							break fill
						}
					}
				}
				// The candidates' rows are scattered: their first lines are
				// requested together instead of one miss after another.
				kernels.PrefetchRows(g.rowBase(), g.rowBytes, pending, g.prefetchLines)
				cands = cands[:0]
				for i, d := range s.distRows(g, x.dk, g.vector(uint32(u)), pending) {
					cands = append(cands, candidate{d, pending[i]})
				}
				slices.SortFunc(cands, func(a, b candidate) int { return cmp.Compare(a.dist, b.dist) })
				for _, c := range cands {
					if have == qgDegree {
						break
					}
					slots[have] = c.node
					have++
				}
			}
			for ; have < qgDegree; have++ {
				slots[have] = emptySlot
			}
		}
	})
	return ids
}

// rabitqParts runs part over [0, n) nodes split among the cores: their
// codes, records and rows are independent. (inParts, sized for copies,
// splits only from 2^18 elements a part, so the codes of an index below
// half a million nodes were built on one core.)
func rabitqParts(n int, part func(lo, hi int)) { splitParts(n, rabitqPartMin, part) }

// rabitqPartMin is the fewest nodes worth a goroutine of the build.
const rabitqPartMin = 512

// qgFillCandidates bounds the links' links measured to fill one row: the
// fill costs at most this many distances per node.
const qgFillCandidates = 96

// qgMedoid is the node of g's first n nearest to their mean (the first
// such node on ties), the quantized graph's entry point.
func qgMedoid(g *graph, n int) uint32 {
	mean64 := make([]float64, g.dim)
	for i := 0; i < n; i++ {
		for j, v := range g.vector(uint32(i)) {
			mean64[j] += float64(v)
		}
	}
	mean := make([]float32, g.dim)
	for j := range mean {
		mean[j] = float32(mean64[j] / float64(max(n, 1)))
	}
	best, bestD := uint32(0), float32(math.Inf(1))
	for i := 0; i < n; i++ {
		if d := kernels.L2Squared(mean, g.vector(uint32(i))); d < bestD {
			best, bestD = uint32(i), d
		}
	}
	return best
}

// qgPrefetchLines is how many lines of the next candidate's row the
// search prefetches while it expands the current one (its vector first).
//
// Per-hop changes tried against the search before it kept expanded
// entries in place (below), each A/B in one run (bench/qg_ab.py,
// BenchmarkQGHop, 20k pypi-use512, ef 32 and 64, 7 rounds of 5 passes,
// load 4-10; answers identical), none faster beyond the noise, which an A/A
// of one binary against itself puts at 0.98x and 0.91x: one shift of the
// buffer to move the expanded node to its exact distance in place of
// remove and reinsert (1.01x, 1.07x CPU per query); the 32 estimates
// computed in one bounds-check-free loop over the factor arrays before the
// admission tests (1.10x, 1.05x); prefetching the node's own 41 lines of
// codes and factors before its exact distance (1.04x, 0.95x; 9 rounds:
// 1.14x, 1.13x). Results:
// bench/results/rabitq-go/*-qg-{move,estimates,prefetch-codes,aa}*.json.
const qgPrefetchLines = 24

// searchQG answers one query on the quantized graph with SymphonyQG's
// search loop (qg.hpp's search and scan_neighbors): a sorted buffer of ef
// candidates by estimated distance; expanding the nearest unexpanded one
// measures its vector exactly (the top k of those measured are the
// answer), then estimates its 32 neighbours with one kernels.FastScan32 of
// its row's codes, relative to it, and inserts those that can enter the
// buffer. Non-admitted nodes route the search but are never returned. q
// is normalised already for cosine.
//
// An expanded entry stays where its estimate put it, and a node is marked
// visited when it is expanded, not when it is estimated, so a node can sit
// in the buffer more than once, once per estimate; a later copy is skipped
// when it comes up but keeps its slot. Marking at estimation instead lost
// recall where the 1-bit estimates are poor (clustered data of 64
// dimensions: 0.84-0.94 against the float graph's 0.97-1.00 at ef 48-200)
// because an estimate from a far node shut out a better one from a nearer
// node.
//
// The loop used to move each expanded node to its exact distance and drop
// the later copies of a node from the buffer, which keeps more distinct
// candidates per slot: more recall at equal ef, but more hops for the same
// recall. Counted on pypi-use512's first 50,000 rows, 500 queries
// (BenchmarkQGHop), recall@10 0.95 took 62 hops a query that way and 51.5
// this way; SymphonyQG itself (rabitqlib, bench/qg_symqg_count.cpp) takes
// 48.8 on its own graph, and this loop 48.9 on that graph, so the rest of
// the gap is the graph's.
//
// It returns up to k candidates by exact distance, nearest first, aliasing
// the scratch.
func (x *Index) searchQG(r *qgRows, g *graph, sc *rabitqScratch, q []float32, k, ef int, adm *admission, entry uint32) []candidate {
	if r.n == 0 {
		return nil
	}
	sc.query.PrepareFastFrom(q) // every estimate is EstimateFastFrom
	var qnorm2 float32
	ip := x.dk != distL2
	if ip {
		qnorm2 = kernels.Dot(q, q)
	}
	base := unsafe.Pointer(unsafe.SliceData(r.words))
	rowBytes := uintptr(r.rowWords) * 4
	prefetch := min(qgPrefetchLines, int(rowBytes/64))
	sc.visited.reset(r.n)
	sc.visited.visit(entry)
	// The entry's slot goes to the first estimate that needs it, as
	// SymphonyQG's entry enters at the largest distance.
	sc.qbuf = append(sc.qbuf[:0], qgEntry{dist: inf, node: entry})
	best := sc.best[:0]
	for next := 0; next < len(sc.qbuf); {
		node := sc.qbuf[next].node
		sc.qbuf[next].node |= qgExpanded // next never rests on an expanded entry
		for next < len(sc.qbuf) && sc.qbuf[next].node&qgExpanded != 0 {
			next++
		}
		if node != entry && sc.visited.visit(node) {
			continue // a later copy of a node expanded already
		}
		if next < len(sc.qbuf) {
			sc.next[0] = sc.qbuf[next].node
			kernels.PrefetchRows(base, rowBytes, sc.next[:], prefetch)
		}
		row := r.row(node)
		vec := wordFloats(row[:r.dim])
		var d, norm float32
		if ip {
			dot := kernels.Dot(q, vec)
			d = 1 - dot
			norm = float32(math.Sqrt(float64(max(qnorm2+math.Float32frombits(row[r.dim])-2*dot, 0))))
		} else {
			d = kernels.L2Squared(q, vec)
			norm = float32(math.Sqrt(float64(d)))
		}
		sc.exact++
		sc.hops++
		if !adm.filtering() || adm.admits(g, node) {
			if len(best) < k {
				best.push(candidate{d, node})
			} else if d < best[0].dist {
				best.replaceTop(candidate{d, node})
			}
		}
		next = min(next, r.expand(sc, row, d, norm, ef))
		for next < len(sc.qbuf) && sc.qbuf[next].node&qgExpanded != 0 {
			next++
		}
	}
	sc.bytes += sc.hops * int64(rowBytes)
	sc.best = best
	sortAscending(best)
	return best
}

// expand estimates the neighbours of row's node, whose exact distance is
// d and ‖q − u‖ norm, and inserts those that can enter the buffer,
// marking them visited. It returns the lowest position an entry went to.
func (r *qgRows) expand(sc *rabitqScratch, row []uint32, d, norm float32, ef int) int {
	lowest := len(sc.qbuf)
	kernels.FastScan32(sc.query.LUT, wordBytes(r.codes(row)), &sc.fast)
	ff := wordFloats(r.factors(row)[:qgFactorWords])
	for j, id := range r.ids(row) {
		if id == emptySlot {
			break
		}
		est, _ := sc.query.EstimateFastFrom(sc.fast[j], ff[qgAdd+j], ff[qgRescale+j], 0, ff[qgSum+j], d, norm)
		if len(sc.qbuf) == ef && est >= sc.qbuf[ef-1].dist {
			continue // it cannot enter now
		}
		if sc.visited.has(id) {
			continue // expanded already
		}
		if pos := sc.insertQG(qgEntry{dist: est, node: id}, ef); pos < lowest {
			lowest = pos
		}
	}
	sc.estimate += qgDegree
	return lowest
}

// qgEntry is a candidate of searchQG's buffer, half a bufferEntry: the
// node's expanded flag is its id's top bit (qgExpanded), as in
// SymphonyQG's buffer, since moving entries to make room for an insertion
// is a large part of the search (a CPU profile of qg searches on
// pypi-use512 gave insertQG's memmove about a third of the samples with
// 16-byte entries). Node ids of a quantized graph stay below qgExpanded
// (loadQG refuses more nodes; a graph of 2^31 rows would need terabytes).
type qgEntry struct {
	dist float32
	node uint32 // node id | qgExpanded once expanded
}

const qgExpanded = 1 << 31

// insertQG is insert for searchQG's buffer of qgEntry (insert's body on
// the smaller entry; a generic one would call through a dictionary).
func (sc *rabitqScratch) insertQG(c qgEntry, ef int) int {
	b := sc.qbuf
	d := c.dist
	if len(b) == ef && d >= b[len(b)-1].dist {
		return len(b)
	}
	// The first position whose distance exceeds d (after its equals, as
	// the scan from the end found it), by halving, as SymphonyQG's buffer
	// does: at the ef a 100-d set needs (256 for recall 0.95 on glove-100's
	// first 100,000 rows) the scan compared half the buffer per insertion,
	// and a CPU profile gave it about a third of the search. Same answers,
	// 0.85x the CPU time a query there (bench/results/rabitq-go/
	// rabitq-go-20261204T022148Z-ae96238-qg-bsearch-glove100k.json).
	pos, n := 0, len(b)
	for n > 1 {
		half := n >> 1
		if !(b[pos+half-1].dist > d) {
			pos += half
		}
		n -= half
	}
	if n == 1 && !(b[pos].dist > d) {
		pos++
	}
	if pos == ef {
		return len(b) // NaN: see insert
	}
	if len(b) < ef {
		b = append(b, qgEntry{})
	}
	copy(b[pos+1:], b[pos:len(b)-1])
	b[pos] = c
	sc.qbuf = b
	return pos
}

// searchOneQG is searchQG with pooled scratch, counting its work in s.
func (x *Index) searchOneQG(r *qgRows, g *graph, s *searcher, q []float32, k, ef int, adm *admission) []candidate {
	sc := r.pool.Get().(*rabitqScratch)
	sc.estimate, sc.refine, sc.exact, sc.bytes, sc.hops = 0, 0, 0, 0, 0
	s.results = append(s.results[:0], x.searchQG(r, g, sc, q, k, ef, adm, r.entry)...)
	if s.testing.rabitqBytes != nil {
		s.testing.rabitqBytes.Add(sc.bytes)
	}
	s.ndis += sc.estimate + sc.exact
	s.nhops += sc.hops
	r.pool.Put(sc)
	return s.results
}
