package hnsw

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/quant/rabitq"
)

// Optional sections of a saved index holding its RaBitQ codes, written when
// the codes describe the graph being saved (files without them load as
// before, with no codes). Part of the file format: do not change.
//
//	RBQP  rabitqParams; its Padded is D, which also names the rotation
//	      (rabitq.NewRotationPadded): files written before rabitq.PaddedDim
//	      hold D = the power of two >= max(dim, 64) and load with the
//	      Hadamard rotation they were coded with, newer ones dim rounded up
//	      to a multiple of 64 (the FHT-Kac walk unless that is a power of two)
//	RBQC  []float32  clusters·dim: the centroids (the rotation is redrawn from Config.Seed and D)
//	RBQR  []uint64   count·stride: the rows of rabitqCodes (code, then packed 1-bit factors)
//	RBQX  []uint8    count·padded: extended codes (bits > 1 only)
//	RBQF  []uint32   count·6: extended factors Add, Rescale, Err, Sum, QErr (float32
//	                 bits), Cluster (bits > 1 only)
//	RBQB  []uint64   count·(bits−1)·(padded/64): a codes-only index's extended
//	                 codes as bit planes (rabitq_codesonly.go), in place of RBQX;
//	                 a file with RBQB has no VECS and loads as Config.RaBitQCodesOnly
//	RBQE  []float32  count·2: a codes-only index's extended factors Add and
//	                 Rescale (rabitqCodes.exTerms), in place of RBQF (files
//	                 written before it have RBQF, whose Add and Rescale are taken)
//	RBQN  []uint32   count·nodeWords: the neighbour blocks (neighbourBlocks, whose
//	                 geometry follows from M and the padded dimension); a file
//	                 with RBQR but no RBQN (written before the blocks existed)
//	                 loads without blocks, except for an index of
//	                 Config.RaBitQBits = 1 whose searches run on them
//	                 (expandsExactly): its blocks are rebuilt from the rows
//	                 and the links
//	RBQG  []uint32   1 + count·32: the quantized graph (Config.RaBitQLayout =
//	                 LayoutQG, rabitq_qg.go): its entry node, then each node's 32
//	                 neighbour ids (emptySlot for none); its rows are rebuilt from
//	                 them and the vectors (the codes are a function of both), and a
//	                 file with RBQG loads as LayoutQG
//	RBQL  []uint32   1: the layout (Config.RaBitQLayout), written only for
//	                 LayoutRows (the other layouts follow from RBQG), with or
//	                 without codes; a file with RBQL of 2 loads as LayoutRows
//
// Loading checks every factor is finite and names an existing centroid,
// and that a block's ids and factors are those of the node's links and
// their rows (its codes are covered by the section's CRC), so a damaged
// file fails with ErrFormat instead of searching on NaNs.
var (
	tagRaBitQParams    = indexfile.FourCC("RBQP")
	tagRaBitQCentroids = indexfile.FourCC("RBQC")
	tagRaBitQRows      = indexfile.FourCC("RBQR")
	tagRaBitQEx        = indexfile.FourCC("RBQX")
	tagRaBitQExFactors = indexfile.FourCC("RBQF")
	tagRaBitQBlocks    = indexfile.FourCC("RBQN")
	tagRaBitQPlanes    = indexfile.FourCC("RBQB")
	tagRaBitQGraph     = indexfile.FourCC("RBQG")
	tagRaBitQLayout    = indexfile.FourCC("RBQL")
	tagRaBitQExTerms   = indexfile.FourCC("RBQE")
)

// layoutSection is section RBQL of an index of layout l, or none.
func layoutSection(l Layout) []indexfile.Section {
	if l != LayoutRows {
		return nil
	}
	return []indexfile.Section{{Tag: tagRaBitQLayout, Data: indexfile.BytesOf([]uint32{uint32(l)})}}
}

// fileLayout is the layout a file records: LayoutQG with section RBQG,
// section RBQL's value with that section (LayoutRows, the only one it is
// written for), else LayoutRecords.
func fileLayout(f *indexfile.File) (Layout, error) {
	_, qg := f.Section(tagRaBitQGraph)
	if _, ok := f.Section(tagRaBitQLayout); !ok {
		if qg {
			return LayoutQG, nil
		}
		return LayoutRecords, nil
	}
	w, err := section[uint32](f, tagRaBitQLayout, 1)
	if err != nil {
		return 0, err
	}
	if Layout(w[0]) != LayoutRows || qg {
		return 0, fmt.Errorf("%w: section %q names layout %d (quantized graph section %t)", ErrFormat, indexfile.TagName(tagRaBitQLayout), w[0], qg)
	}
	return LayoutRows, nil
}

// rabitqParams is the fixed-size block of section RBQP.
type rabitqParams struct {
	Bits, Clusters uint32
	Padded, Stride uint32
	Count          uint64
}

// exFactorWords is the number of uint32s per node in section RBQF: those
// of a rabitq.Factors, whose fields are in the section's order.
const exFactorWords = 6

// The section's words are a rabitq.Factors' fields in order: Add,
// Rescale, Err, Sum, QErr (float32 bits), Cluster.
var _ = [1]struct{}{}[unsafe.Sizeof(rabitq.Factors{})-4*exFactorWords]
var _ = [1]struct{}{}[unsafe.Offsetof(rabitq.Factors{}.QErr)-16]
var _ = [1]struct{}{}[unsafe.Offsetof(rabitq.Factors{}.Cluster)-20]

// factorsOf views section RBQF's words as factors, in place.
func factorsOf(words []uint32) []rabitq.Factors {
	if len(words) == 0 {
		return []rabitq.Factors{}
	}
	return unsafe.Slice((*rabitq.Factors)(unsafe.Pointer(unsafe.SliceData(words))), len(words)/exFactorWords)
}

// factorBytes is factors as the bytes of section RBQF, in place.
func factorBytes(fx []rabitq.Factors) []byte {
	if len(fx) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(fx))), len(fx)*4*exFactorWords)
}

// rabitqSections returns the sections of x's RaBitQ codes if they describe
// g, else none. The rows and codes never change once built, so they are
// not copied; the extended factors are converted into a new array.
func (x *Index) rabitqSections(g *graph) ([]indexfile.Section, error) {
	rq := x.codesOf(g)
	if rq == nil {
		return nil, nil
	}
	p := rabitqParams{Bits: uint32(rq.q.Bits()), Clusters: uint32(rq.q.Clusters()),
		Padded: uint32(rq.padded), Stride: uint32(rq.stride), Count: uint64(rq.n)}
	params, err := indexfile.EncodeFixed(&p)
	if err != nil {
		return nil, err
	}
	sections := []indexfile.Section{
		{Tag: tagRaBitQParams, Data: params},
		{Tag: tagRaBitQCentroids, Data: indexfile.BytesOf(rq.q.Centroids())},
		{Tag: tagRaBitQRows, Data: indexfile.BytesOf(rq.rows)},
	}
	switch {
	case rq.planes != nil:
		sections = append(sections, indexfile.Section{Tag: tagRaBitQExTerms, Data: indexfile.BytesOf(rq.exTerms)},
			indexfile.Section{Tag: tagRaBitQPlanes, Data: indexfile.BytesOf(rq.planes)})
	case rq.fx != nil:
		sections = append(sections, indexfile.Section{Tag: tagRaBitQExFactors, Data: factorBytes(rq.fx)},
			indexfile.Section{Tag: tagRaBitQEx, Data: indexfile.BytesOf(rq.ex)})
	}
	if rq.blocks != nil {
		sections = append(sections, indexfile.Section{Tag: tagRaBitQBlocks, Data: indexfile.BytesOf(rq.blocks.words)})
	}
	if rq.qg != nil {
		sections = append(sections, indexfile.Section{Tag: tagRaBitQGraph, Data: indexfile.BytesOf(rq.qg.section())})
	}
	return sections, nil
}

// loadRaBitQ installs the RaBitQ codes of file f, if it has them, for x's
// graph g (already validated). Codes that do not fit the graph, or that
// name a centroid the file lacks, fail with ErrFormat.
func (x *Index) loadRaBitQ(f *indexfile.File, g *graph) error {
	raw, ok := f.Section(tagRaBitQParams)
	if !ok {
		return nil
	}
	var p rabitqParams
	if err := indexfile.DecodeFixed(raw, &p); err != nil {
		return fmt.Errorf("%w: section %q: %v", ErrFormat, indexfile.TagName(tagRaBitQParams), err)
	}
	if g.floats == x.codesOnly() || p.Count != uint64(g.count) || p.Clusters == 0 || p.Clusters > 1<<16 {
		return fmt.Errorf("%w: rabitq parameters %+v for %d nodes", ErrFormat, p, g.count)
	}
	m := rabitq.L2
	if x.cfg.Metric != metric.L2 {
		m = rabitq.InnerProduct
	}
	centroids, err := section[float32](f, tagRaBitQCentroids, int(p.Clusters)*x.cfg.Dim)
	if err != nil {
		return err
	}
	q, err := rabitq.NewWithCentroidsPadded(x.cfg.Dim, int(p.Padded), m, int(p.Bits), x.cfg.Seed, centroids)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	n := g.count
	rq := &rabitqCodes{g: g, n: n, trained: n, progress: x.progress.Load(), q: q, words: q.Words(), padded: q.Padded()}
	rq.stride = rq.words + rowFactorWords
	if p.Padded != uint32(rq.padded) || p.Stride != uint32(rq.stride) {
		return fmt.Errorf("%w: rabitq rows of %d words and codes of %d bytes, want %d and %d",
			ErrFormat, p.Stride, p.Padded, rq.stride, rq.padded)
	}
	if rq.rows, err = section[uint64](f, tagRaBitQRows, n*rq.stride); err != nil {
		return err
	}
	for node := 0; node < n; node++ {
		if err := checkFactors(rq.factors1(uint32(node)), p.Clusters); err != nil {
			return fmt.Errorf("%w: rabitq code of node %d %v", ErrFormat, node, err)
		}
	}
	if x.codesOnly() && int(p.Bits) != x.cfg.RaBitQBits {
		return fmt.Errorf("%w: codes-only index of %d bits holds codes of %d", ErrFormat, x.cfg.RaBitQBits, p.Bits)
	}
	if p.Bits > 1 && x.codesOnly() {
		if rq.planes, err = section[uint64](f, tagRaBitQPlanes, n*(int(p.Bits)-1)*rq.words); err != nil {
			return err
		}
		rq.codesOnly = true
		if rq.exTerms, err = loadExTerms(f, n, p.Clusters); err != nil {
			return err
		}
	} else if p.Bits > 1 {
		if rq.ex, err = section[uint8](f, tagRaBitQEx, n*rq.padded); err != nil {
			return err
		}
		fx, err := section[uint32](f, tagRaBitQExFactors, n*exFactorWords)
		if err != nil {
			return err
		}
		// The section is used in place (no copy left behind as garbage
		// the Go heap would keep resident).
		rq.fx = factorsOf(fx)
		for i := range rq.fx {
			if err := checkFactors(rq.fx[i], p.Clusters); err != nil {
				return fmt.Errorf("%w: rabitq extended code of node %d %v", ErrFormat, i, err)
			}
		}
	}
	_, stored := f.Section(tagRaBitQBlocks)
	x.rabitqBlocks = stored || x.cfg.RaBitQBits == 1 && x.cfg.RaBitQLayout == LayoutRecords && rq.padded >= expandedMinDims
	switch {
	case stored:
		if err := rq.loadBlocks(f, g); err != nil {
			return err
		}
	case x.rabitqBlocks:
		rq.buildBlocks(g) // a file written before 1-bit indexes searched the blocks
	}
	if x.cfg.RaBitQLayout == LayoutQG {
		if rq.qg, err = x.loadQG(f, g, n, q); err != nil {
			return err
		}
	}
	rq.expanded = x.expandsExactly(rq)
	rq.pool.New = newRaBitQScratch(q, rq.blocks != nil)
	x.rabitq.Store(rq)
	return nil
}

// loadExTerms reads a codes-only index's extended factors: section RBQE
// in place, or from a file written before it, RBQF's Add and Rescale.
func loadExTerms(f *indexfile.File, n int, clusters uint32) ([]float32, error) {
	if _, ok := f.Section(tagRaBitQExTerms); !ok {
		fx, err := section[uint32](f, tagRaBitQExFactors, n*exFactorWords)
		if err != nil {
			return nil, err
		}
		for i, fac := range factorsOf(fx) {
			if err := checkFactors(fac, clusters); err != nil {
				return nil, fmt.Errorf("%w: rabitq extended code of node %d %v", ErrFormat, i, err)
			}
		}
		return exTermsOf(factorsOf(fx)), nil
	}
	terms, err := section[float32](f, tagRaBitQExTerms, 2*n)
	if err != nil {
		return nil, err
	}
	for i, v := range terms {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("%w: rabitq extended code of node %d has a non-finite factor (%v)", ErrFormat, i/2, v)
		}
	}
	return terms, nil
}

// loadQG rebuilds the quantized graph of g's n nodes from section RBQG,
// after checking that it names existing nodes only, with the rotation of
// the file's codes q.
func (x *Index) loadQG(f *indexfile.File, g *graph, n int, q *rabitq.Quantizer) (*qgRows, error) {
	if n >= qgExpanded {
		return nil, fmt.Errorf("%w: quantized graph of %d nodes (at most %d)", ErrFormat, n, qgExpanded-1)
	}
	words, err := section[uint32](f, tagRaBitQGraph, 1+n*qgDegree)
	if err != nil {
		return nil, err
	}
	entry, ids := words[0], words[1:]
	if int(entry) >= n {
		return nil, fmt.Errorf("%w: quantized graph entry %d of %d nodes", ErrFormat, entry, n)
	}
	for i, id := range ids {
		if id != emptySlot && (int(id) >= n || int(id) == i/qgDegree) {
			return nil, fmt.Errorf("%w: quantized graph node %d links node %d of %d", ErrFormat, i/qgDegree, id, n)
		}
	}
	return newQGRows(x.qgQuantizer(q.Padded()), g.dim, n).fill(g, ids, entry), nil
}

// checkFactors refuses factors a search could not use: a non-finite
// number (estimates would be NaN) or a centroid beyond clusters.
func checkFactors(f rabitq.Factors, clusters uint32) error {
	for _, v := range [...]float32{f.Add, f.Rescale, f.Err, f.Sum, f.QErr} {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("has a non-finite factor (%+v)", f)
		}
	}
	if f.Cluster >= clusters {
		return fmt.Errorf("names centroid %d of %d", f.Cluster, clusters)
	}
	return nil
}

// loadBlocks installs section RBQN as rq's neighbour blocks after checking
// that every node's head is its extended code and factors (rq.ex, rq.fx)
// and its slots hold its level-0 links, in order, with the factors of
// their code rows (rq.rows, already checked).
func (rq *rabitqCodes) loadBlocks(f *indexfile.File, g *graph) error {
	nb := newNeighbourBlocks(g, rq.padded, 0, rq.ex != nil)
	words, err := section[uint32](f, tagRaBitQBlocks, rq.n*nb.nodeWords)
	if err != nil {
		return err
	}
	nb.words = words
	adviseHugePages(nb.words)
	for node := 0; node < rq.n; node++ {
		links := g.links(uint32(node), 0)
		count := int(links[0])
		rec := nb.record(uint32(node))
		if nb.headWords > 0 {
			head := rec[:nb.headWords]
			f := rq.fx[node]
			w := head[rq.padded/4:]
			if !slices.Equal(wordBytes(head)[:rq.padded], rq.ex[node*rq.padded:(node+1)*rq.padded]) ||
				w[0] != math.Float32bits(f.Add) || w[1] != math.Float32bits(f.Rescale) || w[2] != math.Float32bits(f.Err) ||
				w[3] != math.Float32bits(f.Sum) || w[4] != math.Float32bits(f.QErr) || w[5] != f.Cluster {
				return fmt.Errorf("%w: rabitq block of node %d: its extended code is not the one of section %q", ErrFormat, node, indexfile.TagName(tagRaBitQEx))
			}
		}
		for slot := 0; slot < nb.blocks*32; slot++ {
			fw := nb.block(rec, slot/32)[nb.codeWords:]
			j := slot % 32
			id, want := fw[blockIDs+j], emptySlot
			if slot < count {
				want = links[1+slot]
			}
			if id != want {
				return fmt.Errorf("%w: rabitq block of node %d: slot %d holds node %d, its links node %d", ErrFormat, node, slot, id, want)
			}
			if id == emptySlot {
				continue
			}
			fac := rq.factors1(id)
			if fw[blockAdd+j] != math.Float32bits(fac.Add) || fw[blockRescale+j] != math.Float32bits(fac.Rescale) ||
				fw[blockErr+j] != math.Float32bits(fac.Err) || fw[blockSum+j] != math.Float32bits(fac.Sum) || fw[blockCluster+j] != fac.Cluster {
				return fmt.Errorf("%w: rabitq block of node %d: slot %d's factors are not node %d's", ErrFormat, node, slot, id)
			}
		}
	}
	rq.blocks = nb
	return nil
}
