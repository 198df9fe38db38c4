package hnsw

import (
	"cmp"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/metric"
)

// referenceQGNeighbours is qgNeighbours as first written, on one core:
// one float distance per candidate as it is found.
func referenceQGNeighbours(x *Index, g *graph, n int) []uint32 {
	ids := make([]uint32, n*qgDegree)
	var seen visitedSet
	var cands []candidate
	for u := 0; u < n; u++ {
		slots := ids[u*qgDegree : (u+1)*qgDegree]
		seen.reset(n)
		seen.visit(uint32(u))
		links := g.links(uint32(u), 0)
		count := int(atomic.LoadUint32(&links[0]))
		have := 0
		for i := 1; i <= count && have < qgDegree; i++ {
			if id := links[i]; int(id) < n && !seen.visit(id) {
				slots[have] = id
				have++
			}
		}
		if have < qgDegree {
			cands = cands[:0]
		fill:
			for _, nb := range slots[:have] {
				l2 := g.links(nb, 0)
				for i := 1; i <= int(l2[0]); i++ {
					id := l2[i]
					if int(id) >= n || seen.visit(id) {
						continue
					}
					cands = append(cands, candidate{g.floatDist(x.dk, g.vector(uint32(u)), id), id})
					if len(cands) == qgFillCandidates {
						break fill
					}
				}
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
	return ids
}

// referenceQGWords are the rows of the quantized graph of g's first n
// nodes as the build first wrote them, on one core: each node's vector
// rotated by the graph's own quantizer, each edge coded by EncodeResidual
// (whose loop go/quant/rabitq checks against its first form).
func referenceQGWords(x *Index, g *graph, n, padded int) (words []uint32, entry uint32) {
	r := newQGRows(x.qgQuantizer(padded), g.dim, n)
	ids := referenceQGNeighbours(x, g, n)
	D := r.padded
	rotated := make([]float32, n*D)
	for i := range n {
		r.q.Rotate(g.vector(uint32(i)), rotated[i*D:(i+1)*D])
	}
	r.words = make([]uint32, n*r.rowWords)
	e := r.q.NewEncoder()
	codes := make([]uint64, qgDegree*(D/64))
	for u := range n {
		row := r.row(uint32(u))
		v := g.vector(uint32(u))
		copy(wordFloats(row[:r.vecWords]), v)
		copy(r.ids(row), ids[u*qgDegree:(u+1)*qgDegree])
		f := r.factors(row)
		var norm2 float32
		for _, a := range v {
			norm2 += a * a
		}
		row[r.dim] = math.Float32bits(norm2) // in the vector's padding
		var slots [32][]uint64
		for j, id := range ids[u*qgDegree : (u+1)*qgDegree] {
			if id == emptySlot {
				continue
			}
			code := codes[j*(D/64) : (j+1)*(D/64)]
			fac := e.EncodeResidual(rotated[int(id)*D:(int(id)+1)*D], rotated[u*D:(u+1)*D], code)
			slots[j] = code
			f[qgAdd+j] = math.Float32bits(fac.Add)
			f[qgRescale+j] = math.Float32bits(fac.Rescale)
			f[qgSum+j] = math.Float32bits(fac.Sum)
		}
		kernels.FastScanPackBlock(wordBytes(r.codes(row)), D/64, &slots)
	}
	return r.words, qgMedoid(g, n)
}

// TestQGBuildKeepsItsRows prevents a faster qg build from changing what
// it builds (a file stores only the links, so its rows are rebuilt on
// load and a changed row changes what a saved index answers): after a
// first Add on every core and after a second one appended to it, the
// quantized graph's rows are bit for bit those of the build as first
// written (referenceQGWords: neighbours one distance at a time, every
// vector rotated by the graph's quantizer) and the code rows those of
// Encode on each stored vector, for both metric kinds, Hadamard and
// FHT-Kac rotations, and graphs whose rows need filling (M 8: at most 16
// links of the node's own).
func TestQGBuildKeepsItsRows(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, c := range []struct {
		dim, m int
		metric metric.Metric
	}{{150, 8, metric.L2}, {64, 8, metric.IP}, {300, 16, metric.Cosine}} {
		x := mustNew(t, Config{Dim: c.dim, Metric: c.metric, M: c.m, Seed: 5, RaBitQBits: 1, RaBitQLayout: LayoutQG})
		data := synth.Clustered(1500, c.dim, 12, 0.4, 41)
		for step, rows := range [][]float32{data[:1200*c.dim], data[1200*c.dim:]} {
			if err := x.Add(rows, nil, nil, 0); err != nil {
				t.Fatal(err)
			}
			rq := x.rabitq.Load()
			g := x.graph.Load()
			if rq == nil || rq.qg == nil || rq.n != g.count {
				t.Fatalf("dim %d step %d: no quantized graph of every node", c.dim, step)
			}
			words, entry := referenceQGWords(x, g, rq.n, rq.padded)
			if rq.qg.entry != entry || !slices.Equal(rq.qg.words, words) {
				at := 0
				for at < len(words) && at < len(rq.qg.words) && words[at] == rq.qg.words[at] {
					at++
				}
				t.Fatalf("dim %d %s step %d: rows differ from the reference from word %d (row %d), entry %d vs %d",
					c.dim, c.metric, step, at, at/rq.qg.rowWords, rq.qg.entry, entry)
			}
			e := rq.q.NewEncoder()
			want := make([]uint64, rq.stride)
			for i := range rq.n {
				f1, _ := e.Encode(g.vector(uint32(i)), want[:rq.words], nil)
				packFactors(want[rq.words:], f1)
				if !slices.Equal(rq.rows[i*rq.stride:(i+1)*rq.stride], want) {
					t.Fatalf("dim %d %s step %d: node %d's code row differs from Encode's", c.dim, c.metric, step, i)
				}
			}
		}
	}
}
