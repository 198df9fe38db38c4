package hnsw

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/indexfile"
	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// newRowsSynth is an index of the rows layout over clustered data of 512
// dimensions (where the default layout builds its neighbour records) with
// its exact neighbours. At 300 dimensions, coded at 320 bits since codes
// are padded to a multiple of 64 (512 before), the rows' recall at ef 32
// is 0.017 below the float graph's on this set, past recallSlack; at 512
// the padding did not change.
func newRowsSynth(t *testing.T, m metric.Metric, n int) *rabitqFixture {
	t.Helper()
	return newSynthFixture(t, Config{Dim: 512, Metric: m, Seed: 5, RaBitQBits: 1, RaBitQLayout: LayoutRows}, n)
}

// TestRowsLayoutKeepsNoNeighbourRecords prevents the rows layout from
// building the per-edge records it exists to leave out (or searching
// anything but the code rows): its codes have no blocks, its memory counts
// none, and at equal ef it reaches the float graph's recall within
// recallSlack while refining with the float vectors.
func TestRowsLayoutKeepsNoNeighbourRecords(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, m := range []metric.Metric{metric.L2, metric.Cosine} {
		f := newRowsSynth(t, m, 3000/raceHalve)
		rq := f.x.rabitq.Load()
		if rq == nil || rq.blocks != nil || rq.qg != nil || rq.expanded || rq.ex != nil {
			t.Fatalf("%s: codes %v: want rows only (no blocks, quantized graph or extended codes)", m, rq != nil)
		}
		if mem := f.x.Memory(); mem.RaBitQBlocks != 0 || mem.RaBitQCodes != 8*mem.Nodes*rq.words {
			t.Fatalf("%s: memory %+v: want the 1-bit rows' codes alone and no blocks", m, mem)
		}
		for _, ef := range []int{32, 64} {
			_, recall, st := f.search(t, ef, nil)
			f.x.rabitq.Store(nil)
			_, floatRecall, _ := f.search(t, ef, nil)
			f.x.rabitq.Store(rq)
			t.Logf("%s ef %d: rows recall %.4f (%d refinements), float %.4f", m, ef, recall, st.Refinements, floatRecall)
			if recall < floatRecall-recallSlack {
				t.Errorf("%s ef %d: rows recall %.4f, want >= %.4f", m, ef, recall, floatRecall-recallSlack)
			}
			if st.Refinements == 0 {
				t.Errorf("%s ef %d: no refinement with the float vectors", m, ef)
			}
		}
	}
}

// TestRowsLayoutSurvivesSaveAndLoad: a saved rows index (section RBQL)
// loads as one, resident or with its vectors mapped, without neighbour
// records, and answers exactly as before; an empty one keeps its layout;
// a damaged RBQL fails with ErrFormat.
func TestRowsLayoutSurvivesSaveAndLoad(t *testing.T) {
	racetest.AnswersOnly(t)
	f := newRowsSynth(t, metric.Cosine, 2000)
	want, _, st := f.search(t, 64, nil)
	dir := t.TempDir()
	path := filepath.Join(dir, "rows.idx")
	if err := f.x.Save(vfs.Default, path); err != nil {
		t.Fatal(err)
	}
	for _, mmap := range []bool{false, true} {
		y, err := Load(vfs.Default, path, LoadOptions{MmapVectors: mmap})
		if err != nil {
			t.Fatal(err)
		}
		rq := y.rabitq.Load()
		if y.cfg.RaBitQLayout != LayoutRows || rq == nil || rq.blocks != nil || y.Mapped() != mmap {
			t.Fatalf("mmap=%v: loaded as layout %s, codes %v, mapped %v", mmap, y.cfg.RaBitQLayout, rq != nil, y.Mapped())
		}
		y.testing.forcePlan, y.testing.forcedPlan = true, PlanGraph
		g := &rabitqFixture{x: y, dim: f.dim, k: f.k, queries: f.queries, truth: f.truth}
		got, _, gst := g.search(t, 64, nil)
		if !slices.Equal(got, want) || gst.DistanceComputations != st.DistanceComputations {
			t.Fatalf("mmap=%v: loaded index answers differently (%d vs %d distances)", mmap, gst.DistanceComputations, st.DistanceComputations)
		}
		y.Close()
	}

	empty, err := New(Config{Dim: 300, Metric: metric.Cosine, RaBitQBits: 1, RaBitQLayout: LayoutRows})
	if err != nil {
		t.Fatal(err)
	}
	emptyPath := filepath.Join(dir, "empty.idx")
	if err := empty.Save(vfs.Default, emptyPath); err != nil {
		t.Fatal(err)
	}
	y, err := Load(vfs.Default, emptyPath, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if y.cfg.RaBitQLayout != LayoutRows {
		t.Fatalf("empty index loaded as layout %s", y.cfg.RaBitQLayout)
	}

	sections, err := f.x.sections(true)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(sections, isTag(tagRaBitQLayout))
	if i < 0 {
		t.Fatal("no RBQL section written")
	}
	for _, bad := range []uint32{uint32(LayoutRecords), uint32(LayoutQG), 7} {
		damaged := slices.Clone(sections)
		damaged[i].Data = indexfile.BytesOf([]uint32{bad})
		badPath := filepath.Join(dir, "bad.idx")
		if err := indexfile.Write(vfs.Default, badPath, damaged); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(vfs.Default, badPath, LoadOptions{}); !errors.Is(err, ErrFormat) {
			t.Fatalf("RBQL of %d: Load = %v, want ErrFormat", bad, err)
		}
	}
}

// TestRowsLayoutNeedsOneBitAndFloats: the rows layout refines with the
// float vectors, so extended codes and codes-only indexes are refused.
func TestRowsLayoutNeedsOneBitAndFloats(t *testing.T) {
	for _, cfg := range []Config{
		{Dim: 64, RaBitQBits: 3, RaBitQLayout: LayoutRows},
		{Dim: 64, RaBitQBits: 3, RaBitQCodesOnly: true, RaBitQLayout: LayoutRows},
		{Dim: 64, RaBitQLayout: LayoutRows},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("New(%+v) = %v, want ErrInvalidArgument", cfg, err)
		}
	}
}
