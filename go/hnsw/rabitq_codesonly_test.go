package hnsw

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/quant/rabitq"
	"github.com/strata-db/strata/go/vfs"
)

// codesOnlyPair builds, from the same vectors and seed on one thread, an
// index keeping floats and a codes-only one: the same graph and the same
// codes, so that the codes-only searches can be held to the other's.
func codesOnlyPair(t *testing.T, m metric.Metric, bits, n, dim int) (floats, codes *Index, data []float32) {
	t.Helper()
	data = synth.Clustered(n, dim, 20, 0.4, 31)
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	floats = mustNew(t, Config{Dim: dim, Metric: m, Seed: 7, M: 8, EfConstruction: 64, RaBitQBits: bits})
	codes = mustNew(t, Config{Dim: dim, Metric: m, Seed: 7, M: 8, EfConstruction: 64, RaBitQBits: bits, RaBitQCodesOnly: true})
	for _, x := range []*Index{floats, codes} {
		if err := x.Add(data, ids, nil, 1); err != nil {
			t.Fatal(err)
		}
	}
	return floats, codes, data
}

// TestCodesOnlyPlanesAreTheExtendedCodes prevents the bit planes from
// drifting from the byte codes they replace: unpacked they must be the
// float index's extended codes, and a search must answer exactly as the
// float index does when it reports extended estimates (codesOnly).
func TestCodesOnlyPlanesAreTheExtendedCodes(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, bits := range []int{2, 3, 5, 8} {
		const n, dim = 1200, 80 // padded to 128: two words per plane
		floats, codes, data := codesOnlyPair(t, metric.Cosine, bits, n, dim)
		fq, cq := floats.rabitq.Load(), codes.rabitq.Load()
		if cq.planes == nil || cq.ex != nil || codes.graph.Load().floats || codes.graph.Load().vectors != nil {
			t.Fatalf("bits %d: codes-only index keeps ex %v, floats %v", bits, cq.ex != nil, codes.graph.Load().floats)
		}
		ex := make([]uint8, cq.padded)
		for node := 0; node < n; node++ {
			cq.unpackPlanes(uint32(node), ex)
			if !slices.Equal(ex, fq.ex[node*fq.padded:(node+1)*fq.padded]) {
				t.Fatalf("bits %d: node %d's planes unpack to %v, want %v", bits, node, ex[:8], fq.ex[node*fq.padded:][:8])
			}
		}
		fq.codesOnly = true
		for _, plan := range []Plan{PlanGraph, PlanExact} {
			floats.testing.forcePlan, floats.testing.forcedPlan = true, plan
			codes.testing.forcePlan, codes.testing.forcedPlan = true, plan
			for qi := 0; qi < 20; qi++ {
				q := data[(qi*37)*dim : (qi*37+1)*dim]
				a, da := searchOne(t, floats, q, 10, 64)
				b, db := searchOne(t, codes, q, 10, 64)
				if plan == PlanExact {
					a, da = exactByEstimates(t, floats, q, 10)
				}
				if !slices.Equal(a, b) || !slices.Equal(da, db) {
					t.Fatalf("bits %d plan %v query %d: codes-only %v %v, want %v %v", bits, plan, qi, b, db, a, da)
				}
			}
		}
	}
}

// exactByEstimates is the top k of x's nodes by extended estimate.
func exactByEstimates(t *testing.T, x *Index, q []float32, k int) ([]int64, []float32) {
	t.Helper()
	rq := x.rabitq.Load()
	sc := rq.pool.Get().(*rabitqScratch)
	defer rq.pool.Put(sc)
	qn := slices.Clone(q)
	if x.cfg.Metric.NeedsNormalize() {
		metric.Normalize(qn)
	}
	sc.query.Prepare(qn)
	g := x.graph.Load()
	var all []candidate
	for node := 0; node < rq.n; node++ {
		all = append(all, candidate{rq.refineOne(g, x.dk, sc, qn, uint32(node)), uint32(node)})
	}
	slices.SortStableFunc(all, func(a, b candidate) int {
		if a.dist < b.dist {
			return -1
		}
		if a.dist > b.dist {
			return 1
		}
		return 0
	})
	ids, dists := make([]int64, k), make([]float32, k)
	for i := range ids {
		ids[i], dists[i] = int64(g.labels[all[i].node]), all[i].dist
	}
	return ids, dists
}

func searchOne(t *testing.T, x *Index, q []float32, k, ef int) ([]int64, []float32) {
	t.Helper()
	ids, dists := make([]int64, k), make([]float32, k)
	if err := x.Search(q, k, ef, 1, ids, dists); err != nil {
		t.Fatal(err)
	}
	return ids, dists
}

// TestCodesOnlyRecall is the codes-only mode's quality check: without any
// float vector, the extended codes must find the true neighbours nearly
// as the float graph does. This data (96 dimensions, tight clusters) is
// harder on the codes than pypi-use512: at ef 128 it measured float 0.987,
// codes-only 0.61 / 0.77 / 0.88 / 0.93 / 0.96 / 0.98 at 2 / 3 / 4 / 5 / 6
// / 8 bits; 5 bits must stay within 0.1 of the float graph.
func TestCodesOnlyRecall(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim, k = 96, 10
	n := 4000 / raceHalve
	data := synth.Clustered(n, dim, 50, 0.4, 21)
	queries := synth.Clustered(100, dim, 50, 0.4, 22)
	var truth [][]uint64
	for _, row := range synth.KNN("l2", data, queries, dim, k) {
		ids := make([]uint64, len(row))
		for i, p := range row {
			ids[i] = uint64(p)
		}
		truth = append(truth, ids)
	}
	recall := func(cfg Config) float64 {
		x := mustNew(t, cfg)
		if err := x.Add(data, nil, nil, 1); err != nil {
			t.Fatal(err)
		}
		x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
		ids := make([]int64, 0, 100*k)
		for i := 0; i < 100; i++ {
			got, _ := searchOne(t, x, queries[i*dim:(i+1)*dim], k, 128)
			ids = append(ids, got...)
		}
		return synth.Recall(ids, truth, k)
	}
	float := recall(Config{Dim: dim, Metric: metric.L2, Seed: 3})
	codes := recall(Config{Dim: dim, Metric: metric.L2, Seed: 3, RaBitQBits: 5, RaBitQCodesOnly: true})
	t.Logf("recall@10 at ef 128: float %.4f, codes-only 5 bits %.4f", float, codes)
	if codes < float-0.1 {
		t.Errorf("codes-only recall %.4f, float graph %.4f: more than 0.1 apart", codes, float)
	}
}

// TestCodesOnlyRefusesWhatNeedsFloats prevents a call that would need the
// dropped vectors from reading nil rows: each fails with ErrCodesOnly and
// changes nothing; removal still works.
func TestCodesOnlyRefusesWhatNeedsFloats(t *testing.T) {
	_, x, data := codesOnlyPair(t, metric.L2, 4, 600, 32)
	const dim = 32
	before, _ := searchOne(t, x, data[:dim], 10, 64)
	checks := map[string]error{
		"Add":         x.Add(data[:dim], []uint64{5000}, nil, 1),
		"GetVectors":  x.GetVectors([]uint64{1}, make([]float32, dim)),
		"Compact":     x.Compact(1),
		"BuildRaBitQ": x.BuildRaBitQ(4),
	}
	_, checks["Renumber"] = x.Renumber(0)
	for name, err := range checks {
		if !errors.Is(err, ErrCodesOnly) || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s on a codes-only index: %v, want ErrCodesOnly", name, err)
		}
	}
	x.DropRaBitQ()
	if after, _ := searchOne(t, x, data[:dim], 10, 64); !slices.Equal(before, after) || x.Len() != 600 {
		t.Fatalf("refused calls changed the index: %v, want %v (len %d)", after, before, x.Len())
	}
	if _, err := x.Remove([]uint64{uint64(before[0])}, false); err != nil {
		t.Fatal(err)
	}
	if after, _ := searchOne(t, x, data[:dim], 10, 64); slices.Contains(after, before[0]) {
		t.Fatalf("removed id %d still returned: %v", before[0], after)
	}
	if _, err := New(Config{Dim: dim, RaBitQBits: 1, RaBitQCodesOnly: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("codes-only with 1-bit codes: %v, want ErrInvalidArgument", err)
	}
	if _, err := New(Config{Dim: dim, RaBitQCodesOnly: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("codes-only without rabitq bits: %v, want ErrInvalidArgument", err)
	}
}

// TestCodesOnlySurvivesSaveAndLoad prevents a reload from losing the mode
// (the file has no vectors, the planes say it is codes-only) or the
// answers, mapped or not; an empty codes-only index reloads still able to
// take its first Add.
func TestCodesOnlySurvivesSaveAndLoad(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim = 32
	_, x, data := codesOnlyPair(t, metric.IP, 3, 700, dim)
	path := filepath.Join(t.TempDir(), "codes.idx")
	if err := x.Save(vfs.Default, path); err != nil {
		t.Fatal(err)
	}
	for _, mmap := range []bool{false, true} {
		y, err := Load(vfs.Default, path, LoadOptions{MmapVectors: mmap})
		if err != nil {
			t.Fatal(err)
		}
		if !y.Config().RaBitQCodesOnly || y.Mapped() || y.Memory().Floats != 0 || y.Memory().RaBitQCodes != x.Memory().RaBitQCodes {
			t.Fatalf("mmap %v: loaded config %+v, mapped %v, memory %+v; want codes-only, unmapped, %+v", mmap, y.Config(), y.Mapped(), y.Memory(), x.Memory())
		}
		for qi := 0; qi < 10; qi++ {
			q := data[qi*50*dim : (qi*50+1)*dim]
			a, da := searchOne(t, x, q, 10, 64)
			b, db := searchOne(t, y, q, 10, 64)
			if !slices.Equal(a, b) || !slices.Equal(da, db) {
				t.Fatalf("mmap %v query %d: reloaded %v %v, want %v %v", mmap, qi, b, db, a, da)
			}
		}
		if err := y.Add(data[:dim], nil, nil, 1); !errors.Is(err, ErrCodesOnly) {
			t.Errorf("Add after load: %v, want ErrCodesOnly", err)
		}
		if err := y.Close(); err != nil {
			t.Fatal(err)
		}
	}

	empty := mustNew(t, Config{Dim: dim, Metric: metric.L2, Seed: 1, RaBitQBits: 3, RaBitQCodesOnly: true})
	if err := empty.Save(vfs.Default, path); err != nil {
		t.Fatal(err)
	}
	y, err := Load(vfs.Default, path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !y.Config().RaBitQCodesOnly {
		t.Fatalf("empty codes-only index reloaded as %+v", y.Config())
	}
	if err := y.Add(data[:300*dim], nil, nil, 1); err != nil {
		t.Fatal(err)
	}
	if y.graph.Load().floats || y.rabitq.Load().planes == nil {
		t.Fatal("the first Add after reload kept float vectors")
	}
	if got, _ := searchOne(t, y, data[7*dim:8*dim], 1, 64); got[0] != 7 {
		t.Errorf("nearest to stored vector 7: %d", got[0])
	}
}

// TestCodesOnlyKeepsNoSlack prevents a codes-only index from holding more
// than its nodes need, built or loaded: arrays at their exact length (not
// the capacity the build grew), no spanning tree (only insertions use it),
// the id table allocated once at its size on load, and the extended factors
// used in place of their file section. A file written with the tree (as
// before, with the full extended factors) loads the same way, and both pass
// CheckIntegrity.
func TestCodesOnlyKeepsNoSlack(t *testing.T) {
	const dim = 40
	_, x, _ := codesOnlyPair(t, metric.L2, 3, 1500, dim)
	exactArrays := func(what string, y *Index) {
		t.Helper()
		g := y.graph.Load()
		n := g.count
		if g.parent != nil || g.vectors != nil {
			t.Errorf("%s: tree %v, vectors %v: want neither", what, g.parent != nil, g.vectors != nil)
		}
		for name, c := range map[string][2]int{
			"level0": {cap(g.level0), n * g.stride0}, "upper": {cap(g.upper), g.upperUsed},
			"upperStart": {cap(g.upperStart), n}, "levels": {cap(g.levels), n},
			"labels": {cap(g.labels), n}, "flags": {cap(g.flags), n},
		} {
			if c[0] != c[1] {
				t.Errorf("%s: %s has capacity %d for %d elements", what, name, c[0], c[1])
			}
		}
		if err := y.CheckIntegrity(); err != nil {
			t.Errorf("%s: %v", what, err)
		}
		if mem := y.Memory(); mem.Graph != 4*(n*g.stride0+g.upperUsed)+n*(4+1+8+4)+4*len(g.rank) {
			t.Errorf("%s: graph memory %d counts a tree it does not keep", what, mem.Graph)
		}
	}
	exactArrays("built", x)

	dir := t.TempDir()
	path := filepath.Join(dir, "codes.idx")
	if err := x.Save(vfs.Default, path); err != nil {
		t.Fatal(err)
	}
	sections, err := x.sections(true)
	if err != nil {
		t.Fatal(err)
	}
	if slices.IndexFunc(sections, isTag(tagParent)) >= 0 {
		t.Fatal("a codes-only index wrote a spanning tree")
	}
	// The file as it was written before: with the tree of the float build
	// and the full extended factors (section RBQF instead of RBQE).
	g := x.graph.Load()
	g.buildTree()
	withTree, err := x.sections(true)
	g.parent = nil
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(withTree, isTag(tagRaBitQExTerms))
	if i < 0 {
		t.Fatal("no RBQE section written")
	}
	full := make([]rabitq.Factors, x.Len())
	for node := range full {
		full[node] = x.rabitq.Load().factors1(uint32(node)) // any finite Err, Sum, QErr and the row's centroid
		full[node].Add, full[node].Rescale = x.rabitq.Load().exTerms[2*node], x.rabitq.Load().exTerms[2*node+1]
	}
	withTree[i] = indexfile.Section{Tag: tagRaBitQExFactors, Data: factorBytes(full)}
	oldPath := filepath.Join(dir, "with-tree.idx")
	if err := indexfile.Write(vfs.Default, oldPath, withTree); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, oldPath} {
		y, err := Load(vfs.Default, p, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		exactArrays(filepath.Base(p), y)
		if d := y.byID.dense(); len(d) != y.Len() {
			t.Errorf("%s: id table of %d slots for ids 0..%d", filepath.Base(p), len(d), y.Len()-1)
		}
		rq, saved := y.rabitq.Load(), x.rabitq.Load()
		if rq.fx != nil || len(rq.exTerms) != 2*y.Len() || cap(rq.exTerms) != len(rq.exTerms) || !slices.Equal(rq.exTerms, saved.exTerms) {
			t.Errorf("%s: %d extended factors (full ones %v) for %d nodes, want the saved Add and Rescale only", filepath.Base(p), len(rq.exTerms), rq.fx != nil, y.Len())
		}
	}
}
