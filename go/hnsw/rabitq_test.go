package hnsw

import (
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/kernels"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// rabitqFixture is a float index over clustered data with its exact
// neighbours.
type rabitqFixture struct {
	x       *Index
	dim, k  int
	data    []float32
	queries []float32
	truth   [][]uint64
}

func newRaBitQFixture(t *testing.T, m metric.Metric, n, dim int) *rabitqFixture {
	t.Helper()
	return newSynthFixture(t, Config{Dim: dim, Metric: m, Seed: 3}, n)
}

// newSynthFixture is an index made with cfg over n clustered points (no
// real data needed), built on one thread, with its exact neighbours.
func newSynthFixture(t *testing.T, cfg Config, n int) *rabitqFixture {
	t.Helper()
	dim, m := cfg.Dim, cfg.Metric
	f := &rabitqFixture{dim: dim, k: 10}
	f.data = synth.Clustered(n, dim, 50, 0.4, 21)
	f.queries = synth.Clustered(100, dim, 50, 0.4, 22)
	x, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	// One thread: a build on every core links in a racing order, so the
	// graph, and the recall the checks compare at a slack of 0.015, would
	// change from run to run.
	if err := x.Add(f.data, ids, nil, 1); err != nil {
		t.Fatal(err)
	}
	// Small graphs plan exact scans; these tests are about the graph search.
	x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
	f.x = x
	name := map[metric.Metric]string{metric.L2: "l2", metric.IP: "ip", metric.Cosine: "cosine"}[m]
	for _, row := range synth.KNN(name, f.data, f.queries, dim, f.k) {
		ids := make([]uint64, len(row))
		for i, p := range row {
			ids[i] = uint64(p)
		}
		f.truth = append(f.truth, ids)
	}
	return f
}

// search runs every query one at a time and returns ids, recall and stats.
func (f *rabitqFixture) search(t *testing.T, ef int, filter *Filter) ([]int64, float64, SearchStats) {
	t.Helper()
	nq := len(f.queries) / f.dim
	ids := make([]int64, nq*f.k)
	dists := make([]float32, nq*f.k)
	var total SearchStats
	for i := 0; i < nq; i++ {
		st, err := f.x.SearchFiltered(f.queries[i*f.dim:(i+1)*f.dim], f.k, ef, 1, filter, ids[i*f.k:(i+1)*f.k], dists[i*f.k:(i+1)*f.k])
		if err != nil {
			t.Fatal(err)
		}
		total.DistanceComputations += st.DistanceComputations
		total.Refinements += st.Refinements
		total.Plan = st.Plan
	}
	return ids, synth.Recall(ids, f.truth, f.k), total
}

// recallSlack is how far below the float graph's recall the code search
// may fall at equal ef on the 1,000 answers of the fixture: issue 22 asks
// 0.01, which holds on pypi-use512 (BenchmarkRaBitQSweep: 0.001-0.005);
// here 0.015, because the bound at ε₀ = 1.9 rules out about 3% of
// neighbours wrongly and ten answers are 0.01.
const recallSlack = 0.015

// TestRaBitQRecallMatchesFloatIndex is the same-algorithm check of issue
// 22: at equal ef, the search on RaBitQ codes must reach the float graph's
// recall within recallSlack (8-bit codes re-rank; 1-bit codes re-rank with
// the floats), while refining only a fraction of the neighbours it
// estimates. It fails if the estimate, the bound, or the pruning by the
// bound is wrong.
func TestRaBitQRecallMatchesFloatIndex(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, m := range []metric.Metric{metric.L2, metric.Cosine} {
		f := newRaBitQFixture(t, m, 4000/raceHalve, 96) // 2,000: two centroids under -race
		_, floatRecall, floatStats := f.search(t, 64, nil)
		for _, bits := range []int{1, 4, 8} {
			if err := f.x.BuildRaBitQ(bits); err != nil {
				t.Fatal(err)
			}
			_, recall, st := f.search(t, 64, nil)
			t.Logf("%s bits=%d: recall %.4f (float %.4f), %d refinements / %d distances (float %d)",
				m, bits, recall, floatRecall, st.Refinements, st.DistanceComputations, floatStats.DistanceComputations)
			if st.Refinements == 0 {
				t.Fatalf("%s bits=%d: no refinements counted: the codes were not searched", m, bits)
			}
			if 2*st.Refinements > st.DistanceComputations {
				t.Errorf("%s bits=%d: refined %d of %d: the bound prunes nothing", m, bits, st.Refinements, st.DistanceComputations)
			}
			if recall < floatRecall-recallSlack {
				t.Errorf("%s bits=%d: recall %.4f, want >= %.4f (float %.4f)", m, bits, recall, floatRecall-recallSlack, floatRecall)
			}
			if bits == 8 {
				rq := f.x.rabitq.Load()
				rq.refineOnExpand = true
				_, expandRecall, est := f.search(t, 64, nil)
				t.Logf("%s refined on expansion: recall %.4f, %d refinements", m, expandRecall, est.Refinements)
				// Not the same algorithm (the traversal is ordered by 1-bit
				// estimates until a node is expanded): it trades recall at
				// equal ef for about half the refinements.
				if expandRecall < floatRecall-0.08 || est.Refinements == 0 || 3*est.Refinements > 2*st.Refinements {
					t.Errorf("%s refined on expansion: recall %.4f (float %.4f), %d refinements (on discovery %d)",
						m, expandRecall, floatRecall, est.Refinements, st.Refinements)
				}
				rq.refineOnExpand = false
				// Without floats the answer is the top k by 8-bit
				// estimates: close, but ties misorder.
				rq.codesOnly = true
				_, codesRecall, st := f.search(t, 64, nil)
				t.Logf("%s codes only: recall %.4f", m, codesRecall)
				if codesRecall < floatRecall-0.05 || st.Refinements == 0 {
					t.Errorf("%s codes only: recall %.4f (float %.4f), %d refinements", m, codesRecall, floatRecall, st.Refinements)
				}
			}
		}
	}
}

// TestRaBitQStaleCodesFallBackToFloats prevents searches on codes that no
// longer describe the graph: after an Add the codes lack the new nodes, so
// searches must use the float vectors (and find the new ones) until
// BuildRaBitQ runs again.
func TestRaBitQStaleCodesFallBackToFloats(t *testing.T) {
	f := newRaBitQFixture(t, metric.L2, 2000/raceShrink, 32)
	if err := f.x.BuildRaBitQ(8); err != nil {
		t.Fatal(err)
	}
	extra := synth.Clustered(10, f.dim, 50, 0.4, 99)
	if err := f.x.Add(extra, []uint64{5000, 5001, 5002, 5003, 5004, 5005, 5006, 5007, 5008, 5009}, nil, 1); err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, 1)
	dists := make([]float32, 1)
	st, err := f.x.SearchFiltered(extra[:f.dim], 1, 64, 1, nil, ids, dists)
	if err != nil {
		t.Fatal(err)
	}
	if st.Refinements != 0 || ids[0] != 5000 {
		t.Fatalf("after Add: found %d with %d refinements, want 5000 by the float search", ids[0], st.Refinements)
	}
	if err := f.x.BuildRaBitQ(8); err != nil {
		t.Fatal(err)
	}
	st, err = f.x.SearchFiltered(extra[:f.dim], 1, 64, 1, nil, ids, dists)
	if err != nil {
		t.Fatal(err)
	}
	if st.Refinements == 0 || ids[0] != 5000 {
		t.Fatalf("after rebuilding the codes: found %d with %d refinements, want 5000 on the codes", ids[0], st.Refinements)
	}
}

// TestRaBitQHonoursRemovalsAndFilters prevents the code search from
// returning a removed node or one a filter excludes (they still route).
func TestRaBitQHonoursRemovalsAndFilters(t *testing.T) {
	racetest.AnswersOnly(t)
	const n = 3000 / raceShrink
	f := newRaBitQFixture(t, metric.L2, n, 48)
	if err := f.x.BuildRaBitQ(8); err != nil {
		t.Fatal(err)
	}
	ids, _, _ := f.search(t, 64, nil)
	removed := slices.Clone(ids[:f.k]) // query 0's answers
	rm := make([]uint64, len(removed))
	for i, id := range removed {
		rm[i] = uint64(id)
	}
	if _, err := f.x.Remove(rm, false); err != nil {
		t.Fatal(err)
	}
	allow := make([]uint64, 0, n/2)
	for id := uint64(0); id < n; id += 2 {
		allow = append(allow, id)
	}
	for _, filter := range []*Filter{nil, {Allow: allow}} {
		got, _, st := f.search(t, 64, filter)
		if st.Refinements == 0 {
			t.Fatalf("filter %v: the codes were not searched", filter != nil)
		}
		for _, id := range got {
			if slices.Contains(removed, id) {
				t.Fatalf("returned removed id %d", id)
			}
			if filter != nil && id >= 0 && id%2 == 1 {
				t.Fatalf("returned id %d, which the filter excludes", id)
			}
		}
	}
}

// TestBuildRaBitQRejectsBadArguments prevents codes built from SQ8 codes
// (there are no floats to code) or with an unsupported width.
func TestBuildRaBitQRejectsBadArguments(t *testing.T) {
	f := newRaBitQFixture(t, metric.L2, 100, 16)
	for _, bits := range []int{0, 9} {
		if err := f.x.BuildRaBitQ(bits); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("bits=%d: err = %v, want ErrInvalidArgument", bits, err)
		}
	}
	x, err := New(Config{Dim: 16, Quantization: QuantSQ8})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.BuildRaBitQ(8); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("sq8 index: err = %v, want ErrInvalidArgument", err)
	}
}

// TestRaBitQSearchDuringAdd prevents a search on codes from reading past
// them while an Add links new nodes into the graph generation the codes
// describe (those nodes have no code; a search that started on the codes
// before the Add's first insertion still walks their links): searches
// running beside the Add must return only valid ids and never panic. Run
// with -race.
func TestRaBitQSearchDuringAdd(t *testing.T) {
	const dim, first, more = 32, 600, 300
	data := synth.Clustered(first+more, dim, 50, 0.4, 77)
	queries := synth.Clustered(20, dim, 50, 0.4, 78)
	x, err := New(Config{Dim: dim, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
	if err := x.Add(data[:first*dim], nil, nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := x.BuildRaBitQ(8); err != nil {
		t.Fatal(err)
	}
	g := x.graph.Load()
	done := make(chan error, 1)
	go func() { done <- x.Add(data[first*dim:], nil, nil, 2) }()
	out := make([]int64, 10)
	dists := make([]float32, 10)
	for searching := true; searching; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			searching = false
		default:
		}
		for i := 0; i < 20; i++ {
			if _, err := x.SearchFiltered(queries[i*dim:(i+1)*dim], 10, 32, 1, nil, out, dists); err != nil {
				t.Fatal(err)
			}
			for _, id := range out {
				if id < -1 || id >= first+more {
					t.Fatalf("search beside Add returned id %d", id)
				}
			}
		}
	}
	if x.graph.Load() != g {
		t.Fatal("the Add grew the graph: the codes were never searched beside it (fixture sizes)")
	}
}

// TestRaBitQCodesSurviveSaveAndLoad prevents codes that are lost, or come
// back different, through a file: a loaded index answers every query
// exactly as the saved one did, on its codes (mapped or not); a file saved
// after the codes went stale has none; and files whose RaBitQ sections pass
// their checksums but do not fit the graph fail with ErrFormat.
func TestRaBitQCodesSurviveSaveAndLoad(t *testing.T) {
	racetest.AnswersOnly(t)
	f := newRaBitQFixture(t, metric.Cosine, 2000, 40)
	if err := f.x.BuildRaBitQBlocks(6); err != nil {
		t.Fatal(err)
	}
	want, _, st := f.search(t, 48, nil)
	path := filepath.Join(t.TempDir(), "x.idx")
	if err := f.x.Save(vfs.Default, path); err != nil {
		t.Fatal(err)
	}
	for _, mmap := range []bool{false, true} {
		y, err := Load(vfs.Default, path, LoadOptions{MmapVectors: mmap})
		if err != nil {
			t.Fatal(err)
		}
		y.testing.forcePlan, y.testing.forcedPlan = true, PlanGraph
		g := &rabitqFixture{x: y, dim: f.dim, k: f.k, queries: f.queries, truth: f.truth}
		got, _, gst := g.search(t, 48, nil)
		if !slices.Equal(got, want) || gst.Refinements != st.Refinements {
			t.Fatalf("mmap=%v: loaded index answers differently (%d vs %d refinements)", mmap, gst.Refinements, st.Refinements)
		}
		y.Close()
	}

	sections, err := f.x.sections(true)
	if err != nil {
		t.Fatal(err)
	}
	damaged := map[string]func([]indexfile.Section){
		"count": func(s []indexfile.Section) {
			p := rabitqParams{Bits: 6, Clusters: 2, Padded: 64, Stride: 4, Count: 1999}
			s[slices.IndexFunc(s, isTag(tagRaBitQParams))].Data, _ = indexfile.EncodeFixed(&p)
		},
		"centroid": func(s []indexfile.Section) {
			rows := slices.Clone(s[slices.IndexFunc(s, isTag(tagRaBitQRows))].Data)
			rows[4*8-1] = 0x7f // node 0's cluster: top byte of its row's last word (stride 4 at dim 40)
			s[slices.IndexFunc(s, isTag(tagRaBitQRows))].Data = rows
		},
		"short ex": func(s []indexfile.Section) {
			i := slices.IndexFunc(s, isTag(tagRaBitQEx))
			s[i].Data = s[i].Data[:len(s[i].Data)-64]
		},
		// Non-finite factors would make every estimate NaN (0ae9dc8 made
		// the search survive them; the file must not load at all).
		"nan factor": func(s []indexfile.Section) {
			i := slices.IndexFunc(s, isTag(tagRaBitQRows))
			rows := slices.Clone(s[i].Data)
			binary.LittleEndian.PutUint32(rows[8+4:], math.Float32bits(float32(math.NaN()))) // node 0's Rescale
			s[i].Data = rows
		},
		"inf ex factor": func(s []indexfile.Section) {
			i := slices.IndexFunc(s, isTag(tagRaBitQExFactors))
			fx := slices.Clone(s[i].Data)
			binary.LittleEndian.PutUint32(fx[4*exFactorWords+8:], math.Float32bits(float32(math.Inf(1)))) // node 1's Err
			s[i].Data = fx
		},
		"block id": func(s []indexfile.Section) {
			i := slices.IndexFunc(s, isTag(tagRaBitQBlocks))
			nb := slices.Clone(s[i].Data)
			head := f.x.rabitq.Load().blocks.headWords
			off := 4 * (head + 64 + blockIDs + 3) // node 0, block 0, slot 3's id (D = 64)
			binary.LittleEndian.PutUint32(nb[off:], binary.LittleEndian.Uint32(nb[off:])^1)
			s[i].Data = nb
		},
		"block factor": func(s []indexfile.Section) {
			i := slices.IndexFunc(s, isTag(tagRaBitQBlocks))
			nb := slices.Clone(s[i].Data)
			nb[4*(f.x.rabitq.Load().blocks.headWords+64+blockErr+1)] ^= 1 // node 0, slot 1's Err
			s[i].Data = nb
		},
		"block head": func(s []indexfile.Section) {
			i := slices.IndexFunc(s, isTag(tagRaBitQBlocks))
			nb := slices.Clone(s[i].Data)
			nb[5] ^= 1 // node 0's own extended code
			s[i].Data = nb
		},
		"short blocks": func(s []indexfile.Section) {
			i := slices.IndexFunc(s, isTag(tagRaBitQBlocks))
			s[i].Data = s[i].Data[:len(s[i].Data)-4]
		},
	}
	for name, damage := range damaged {
		s := slices.Clone(sections)
		damage(s)
		bad := filepath.Join(t.TempDir(), "bad.idx")
		if err := indexfile.Write(vfs.Default, bad, s); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(vfs.Default, bad, LoadOptions{}); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: load error %v, want ErrFormat", name, err)
		}
	}

	// A file without RBQN (written before the neighbour blocks existed, or
	// by BuildRaBitQ) loads without blocks and answers as the saved index
	// does on its rows.
	f.x.rabitq.Store(f.x.rabitq.Load().withoutBlocks())
	want, _, _ = f.search(t, 48, nil)
	old := slices.DeleteFunc(slices.Clone(sections), isTag(tagRaBitQBlocks))
	oldPath := filepath.Join(t.TempDir(), "old.idx")
	if err := indexfile.Write(vfs.Default, oldPath, old); err != nil {
		t.Fatal(err)
	}
	y, err := Load(vfs.Default, oldPath, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rq := y.rabitq.Load(); rq == nil || rq.blocks != nil {
		t.Fatal("a file without RBQN did not load as codes without neighbour blocks")
	}
	y.testing.forcePlan, y.testing.forcedPlan = true, PlanGraph
	if got, _, _ := (&rabitqFixture{x: y, dim: f.dim, k: f.k, queries: f.queries, truth: f.truth}).search(t, 48, nil); !slices.Equal(got, want) {
		t.Fatal("an index loaded without RBQN answers differently")
	}
	y.Close()

	if err := f.x.Add(f.queries[:f.dim], []uint64{9999}, nil, 1); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(t.TempDir(), "stale.idx")
	if err := f.x.Save(vfs.Default, stale); err != nil {
		t.Fatal(err)
	}
	y, err = Load(vfs.Default, stale, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if y.rabitq.Load() != nil {
		t.Fatal("stale codes were saved")
	}
}

func isTag(tag uint32) func(indexfile.Section) bool {
	return func(s indexfile.Section) bool { return s.Tag == tag }
}

// TestRaBitQBlocksHoldTheNeighboursCodes prevents a neighbour block that
// does not describe its node's links: every slot must hold the node's
// link in order (empty past them), its factors must be the neighbour's
// row's, and FastScan32 on the block must give, per slot, the sum of the
// query tables over the nibbles of the neighbour's own row code, so a
// packing or offset error cannot hide behind the search's tolerance. It
// also checks the block path is what a search runs.
func TestRaBitQBlocksHoldTheNeighboursCodes(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, dim := range []int{40, 300} { // one and several code words, D = 64 and 512
		f := newRaBitQFixture(t, metric.L2, 1500/raceShrink, dim)
		if err := f.x.BuildRaBitQBlocks(4); err != nil {
			t.Fatal(err)
		}
		rq := f.x.rabitq.Load()
		g := f.x.graph.Load()
		if rq.blocks == nil {
			t.Fatal("BuildRaBitQ built no neighbour blocks")
		}
		sc := rq.pool.Get().(*rabitqScratch)
		sc.query.Prepare(f.queries[:dim])
		var sums [32]uint32
		for node := uint32(0); int(node) < rq.n; node += 7 {
			links := g.links(node, 0)
			rec := rq.blocks.record(node)
			for b := 0; b < rq.blocks.blocks; b++ {
				blk := rq.blocks.block(rec, b)
				fw := blk[rq.blocks.codeWords:]
				kernels.FastScan32(sc.query.LUT, wordBytes(blk[:rq.blocks.codeWords]), &sums)
				for j := 0; j < 32; j++ {
					slot := 32*b + j
					id := fw[blockIDs+j]
					if slot >= int(links[0]) {
						if id != emptySlot {
							t.Fatalf("node %d slot %d past its %d links holds %d", node, slot, links[0], id)
						}
						continue
					}
					if id != links[1+slot] {
						t.Fatalf("node %d slot %d holds %d, its link is %d", node, slot, id, links[1+slot])
					}
					code := rq.rows[int(id)*rq.stride:][:rq.words]
					var want uint32
					for grp := 0; grp < 16*rq.words; grp++ {
						want += uint32(sc.query.LUT[16*grp+int(code[grp/16]>>(4*(grp%16))&15)])
					}
					if sums[j] != want {
						t.Fatalf("dim %d node %d slot %d: block sum %d, the row code's %d", dim, node, slot, sums[j], want)
					}
					if fac := rq.factors1(id); fw[blockRescale+j] != math.Float32bits(fac.Rescale) || fw[blockCluster+j] != fac.Cluster {
						t.Fatalf("node %d slot %d: factors are not node %d's", node, slot, id)
					}
				}
			}
		}
		rq.pool.Put(sc)
	}
}

// TestRaBitQBlocksSearchLikeRows is the metamorphic check of the two
// layouts on one graph: searching the neighbour blocks (FastScan, 6-bit
// query), the code rows (8-bit query) and the hybrid of both
// (blockScanMin) must reach the same recall within the slack of two
// estimators, on both metrics and under a filter,
// and the blocks must not refine more than a quarter beyond the rows
// (their bound adds the 6-bit query's rounding).
func TestRaBitQBlocksSearchLikeRows(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, m := range []metric.Metric{metric.L2, metric.Cosine} {
		const n = 3000 / raceShrink
		f := newRaBitQFixture(t, m, n, 96)
		if err := f.x.BuildRaBitQBlocks(8); err != nil {
			t.Fatal(err)
		}
		var even []uint64
		for id := uint64(0); id < n; id += 2 {
			even = append(even, id)
		}
		// Recall is against the unfiltered truth (about half under the
		// filter): what counts is that both layouts reach the same.
		for _, filter := range []*Filter{nil, {Allow: even}} {
			rq := f.x.rabitq.Load()
			_, blockRecall, bst := f.search(t, 64, filter)
			rows := rq.withoutBlocks()
			f.x.rabitq.Store(rows)
			_, rowRecall, rst := f.search(t, 64, filter)
			hybrid := rq.withBlocks()
			hybrid.blockScanMin = 16 // about half the expansions take the rows
			f.x.rabitq.Store(hybrid)
			_, hybridRecall, hst := f.search(t, 64, filter)
			f.x.rabitq.Store(rq)
			t.Logf("%s filter=%v: hybrid recall %.4f, %d refinements", m, filter != nil, hybridRecall, hst.Refinements)
			if hybridRecall < rowRecall-recallSlack || hybridRecall < blockRecall-recallSlack || hst.Refinements == 0 {
				t.Errorf("%s filter=%v: hybrid recall %.4f (blocks %.4f, rows %.4f)", m, filter != nil, hybridRecall, blockRecall, rowRecall)
			}
			t.Logf("%s filter=%v: blocks recall %.4f, %d refinements; rows %.4f, %d", m, filter != nil, blockRecall, bst.Refinements, rowRecall, rst.Refinements)
			if blockRecall < rowRecall-recallSlack || rowRecall < blockRecall-recallSlack {
				t.Errorf("%s filter=%v: blocks recall %.4f, rows %.4f", m, filter != nil, blockRecall, rowRecall)
			}
			if bst.Refinements == 0 || 4*bst.Refinements > 5*rst.Refinements {
				t.Errorf("%s filter=%v: blocks refined %d, rows %d", m, filter != nil, bst.Refinements, rst.Refinements)
			}
		}
	}
}
