package hnsw

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// newExpandedFixture is newRaBitQFixture's data in an index of
// Config.RaBitQBits = 1, the door's default, whose searches run
// searchRaBitQExpanded on the neighbour blocks.
func newExpandedFixture(t *testing.T, m metric.Metric, n, dim int) *rabitqFixture {
	t.Helper()
	f := &rabitqFixture{dim: dim, k: 10}
	f.data = synth.Clustered(n, dim, 50, 0.4, 21)
	f.queries = synth.Clustered(100, dim, 50, 0.4, 22)
	x := mustNew(t, Config{Dim: dim, Metric: m, Seed: 3, RaBitQBits: 1})
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = uint64(i)
	}
	if err := x.Add(f.data, ids, nil, 1); err != nil { // one thread: the same graph every run
		t.Fatal(err)
	}
	x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
	f.x = x
	name := map[metric.Metric]string{metric.L2: "l2", metric.Cosine: "cosine"}[m]
	for _, row := range synth.KNN(name, f.data, f.queries, dim, f.k) {
		ids := make([]uint64, len(row))
		for i, p := range row {
			ids[i] = uint64(p)
		}
		f.truth = append(f.truth, ids)
	}
	return f
}

// TestRaBitQ1BitSearchMeasuresOnlyExpandedNodes prevents the door's 1-bit
// mode from losing its traversal (SymphonyQG's: ordered by 1-bit
// estimates, exact distances for expanded nodes only) or its answers: the
// codes must carry the blocks and run the expanded search, measure at most
// about one node per hop and the promising neighbours the beam dropped (a
// fraction of the estimates), reach the float graph's recall within 0.04
// at ef 64 (it orders the beam by estimates, so it is not the same
// algorithm: on this fixture it measures more and ends above the float
// graph, on pypi-use512 0.000-0.003 below from ef 64), and return only
// admitted ids under a filter, for both metrics. Below expandedMinDims the
// index keeps searchRaBitQ.
func TestRaBitQ1BitSearchMeasuresOnlyExpandedNodes(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, m := range []metric.Metric{metric.L2, metric.Cosine} {
		const n = 4000 / raceShrink
		f := newExpandedFixture(t, m, n, 256)
		rq := f.x.rabitq.Load()
		if rq == nil || rq.blocks == nil || !rq.expanded {
			t.Fatalf("%s: a RaBitQBits=1 index has no blocks or does not search them expanded", m)
		}
		if low := newExpandedFixture(t, m, 300, 96).x.rabitq.Load(); low.expanded || low.blocks != nil {
			t.Fatalf("%s: a 96-dimensional RaBitQBits=1 index searches expanded", m)
		}
		var even []uint64
		for id := uint64(0); id < n; id += 2 {
			even = append(even, id)
		}
		for _, filter := range []*Filter{nil, {Allow: even}} {
			f.x.rabitq.Store(nil)
			_, floatRecall, _ := f.search(t, 64, filter)
			f.x.rabitq.Store(rq)
			ids, recall, st := f.search(t, 64, filter)
			t.Logf("%s filter=%v: recall %.4f (float %.4f), %d exact / %d distances", m, filter != nil, recall, floatRecall, st.Refinements, st.DistanceComputations)
			if st.Refinements == 0 || 4*st.Refinements > st.DistanceComputations {
				t.Errorf("%s filter=%v: %d exact distances of %d: not one per expansion", m, filter != nil, st.Refinements, st.DistanceComputations)
			}
			if recall < floatRecall-0.04 {
				t.Errorf("%s filter=%v: recall %.4f, want >= %.4f (float %.4f)", m, filter != nil, recall, floatRecall-0.04, floatRecall)
			}
			if filter != nil {
				for _, id := range ids {
					if id >= 0 && id%2 != 0 {
						t.Fatalf("%s: id %d returned outside the filter", m, id)
					}
				}
			}
		}
	}
}

// TestRaBitQ1BitBlocksRebuiltFromOldFile prevents a 1-bit index saved
// before its searches ran on the blocks (a file with codes but no RBQN)
// from loading into the slower search: Load must rebuild the blocks and
// answer as an index that saved them.
func TestRaBitQ1BitBlocksRebuiltFromOldFile(t *testing.T) {
	racetest.AnswersOnly(t)
	f := newExpandedFixture(t, metric.Cosine, 1000, 200) // 256 coded dimensions
	want, _, _ := f.search(t, 32, nil)
	dir := t.TempDir()
	withBlocks := filepath.Join(dir, "blocks.idx")
	if err := f.x.Save(vfs.Default, withBlocks); err != nil {
		t.Fatal(err)
	}
	// The old file: the same codes, no blocks.
	f.x.rabitq.Store(f.x.rabitq.Load().withoutBlocks())
	old := filepath.Join(dir, "old.idx")
	if err := f.x.Save(vfs.Default, old); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{withBlocks, old} {
		y, err := Load(vfs.Default, path, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rq := y.rabitq.Load()
		if rq == nil || rq.blocks == nil || !rq.expanded {
			t.Fatalf("%s: loaded without blocks or without the expanded search", filepath.Base(path))
		}
		y.testing.forcePlan, y.testing.forcedPlan = true, PlanGraph
		f.x = y
		if got, _, _ := f.search(t, 32, nil); !slices.Equal(got, want) {
			t.Errorf("%s: loaded index answers differently from the saved one", filepath.Base(path))
		}
	}
}
