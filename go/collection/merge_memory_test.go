package collection

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/internal/racetest"
)

// twoCheckpointedSegments creates a collection in dir holding two sealed
// segments with files: keys 0-1499, then 1000-1999 (500 overwritten),
// each batch built and checkpointed; m is its model.
func twoCheckpointedSegments(t *testing.T, dir string, tuning Tuning, rng *rand.Rand) (*Collection, model) {
	t.Helper()
	c := mustCreate(t, dir, tuning)
	m := model{}
	for _, ids := range [][]uint64{idRange(1500), idRange(2000)[1000:]} {
		upsertRandom(t, c, rng, m, ids)
		c.waitIndexed()
		if err := c.Checkpoint(); err != nil {
			t.Fatal(err)
		}
	}
	return c, m
}

// TestMergeReadsItsSourcesMapped: a merge first puts in the place of its
// sources that have files their files' indexes with the vectors mapped
// (segment.Graphs.MapSources), so that the sources' floats and the new
// graph are not both in memory; every answer is the same before, with the
// sources mapped and after the merge, and the merged segment of a field
// of ram placement is in memory again, with nothing left mapped.
func TestMergeReadsItsSourcesMapped(t *testing.T) {
	dir := t.TempDir()
	tuning := Tuning{CheckpointBytes: -1, VacuumRatio: -1} // no merge but this test's
	rng := rand.New(rand.NewPCG(7, 8))
	c, m := twoCheckpointedSegments(t, dir, tuning, rng)
	f := c.fields.Load().def
	srcs := f.index.Sealed()
	if len(srcs) != 2 {
		t.Fatalf("%d sealed segments, want 2", len(srcs))
	}
	queries := randomVectors(rng, 20)
	answers := func() [][]ID {
		var out [][]ID
		for q := range 20 {
			ids, _ := nearest(t, c, queries[q*testDim:(q+1)*testDim], 10, nil)
			out = append(out, ids)
		}
		return out
	}
	before := answers()
	mapped := f.index.MapSources(srcs, c.mergeSourceLoader(f))
	if n := f.index.Mapped(); n != 2 {
		t.Fatalf("%d sources mapped, want 2", n)
	}
	for i, s := range mapped {
		if !s.Index().SortedKeysCurrent() {
			t.Fatalf("mapped source %d has no sealed key table: its first filtered search would build it", i)
		}
	}
	if got := answers(); !slices.EqualFunc(got, before, slices.Equal) {
		t.Fatalf("answers changed once the sources were mapped")
	}
	checkModel(t, c, m)
	if err := f.index.Merge(mapped, 2); err != nil {
		t.Fatal(err)
	}
	if n, segs := f.index.Mapped(), len(f.index.Sealed()); n != 0 || segs != 1 {
		t.Fatalf("after the merge: %d segments mapped of %d, want 0 of 1 (ram placement)", n, segs)
	}
	checkModel(t, c, m)
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, tuning)
	defer c.Close()
	checkModel(t, c, m)
}

// TestMergeDoesNotMapAnOpenedSourceTwice: a segment Open loaded has its
// vectors in its file's mapping already (ram placement too), so a merge
// reads it as it is instead of loading its file a second time (the
// second mapping's pages counted in the RSS beside the first's: at 100k
// the merge's peak), and the merge of them holds every row.
func TestMergeDoesNotMapAnOpenedSourceTwice(t *testing.T) {
	racetest.AnswersOnly(t)
	dir := t.TempDir()
	tuning := Tuning{CheckpointBytes: -1, VacuumRatio: -1} // no merge but this test's
	c, m := twoCheckpointedSegments(t, dir, tuning, rand.New(rand.NewPCG(9, 10)))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = mustOpen(t, dir, tuning)
	defer c.Close()
	f := c.fields.Load().def
	srcs := f.index.Sealed()
	if len(srcs) != 2 {
		t.Fatalf("%d sealed segments, want 2", len(srcs))
	}
	for i, s := range srcs {
		if !s.Index().VectorsInFile() {
			t.Fatalf("opened segment %d: vectors not in its file's mapping", i)
		}
	}
	loads := 0
	load := c.mergeSourceLoader(f)
	mapped := f.index.MapSources(srcs, func(file string) (*hnsw.Index, error) {
		loads++
		return load(file)
	})
	if loads != 0 || !slices.Equal(mapped, srcs) {
		t.Fatalf("MapSources loaded %d files for sources Open mapped (same sources: %v), want none", loads, slices.Equal(mapped, srcs))
	}
	if err := f.index.Merge(mapped, 2); err != nil {
		t.Fatal(err)
	}
	if segs := len(f.index.Sealed()); segs != 1 {
		t.Fatalf("%d segments after the merge, want 1", segs)
	}
	checkModel(t, c, m)
}
