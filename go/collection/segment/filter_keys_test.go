package segment

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/vfs"
)

// TestSealedSegmentsIntersectFiltersFromTheFirstQuery prevents a sealed
// segment from looking up a sorted allow list id by id until its ids
// have been quiet between two filtered searches (hnsw.Index.SealKeys):
// every segment has its key table current after a seal, a load, a merge,
// a switch to a mapped copy and removals (tombstones do not change keys),
// and a filtered search through the tables answers what a search through
// lookups (the same list shuffled) answers.
func TestSealedSegmentsIntersectFiltersFromTheFirstQuery(t *testing.T) {
	g := testGraphs(t)
	rng := rand.New(rand.NewPCG(7, 7))
	var all []uint64
	add := func(n int, sparse bool) {
		keys := make([]uint64, n)
		for i := range keys {
			keys[i] = uint64(len(all) + i)
			if sparse {
				keys[i] += 1 << 40
			}
		}
		if err := g.Add(vecs(rng, n), keys, 1); err != nil {
			t.Fatal(err)
		}
		all = append(all, keys...)
	}
	dir := t.TempDir()
	saved := map[string]*hnsw.Frozen{}
	name := names()
	seal := func() []Saving {
		saves, err := g.Seal(func() string { return filepath.Join(dir, name()) })
		if err != nil {
			t.Fatal(err)
		}
		for _, sv := range saves {
			if sv.Frozen != nil {
				if err := sv.Frozen.Save(vfs.Default, sv.File); err != nil {
					t.Fatal(err)
				}
				saved[sv.File] = sv.Frozen
			}
		}
		return saves
	}
	check := func(stage string) {
		t.Helper()
		for i, s := range g.Sealed() {
			if !s.Index().SortedKeysCurrent() {
				t.Fatalf("%s: sealed segment %d has no current key table", stage, i)
			}
		}
		var allow []uint64
		for _, k := range all {
			if rng.IntN(4) == 0 {
				allow = append(allow, k)
			}
		}
		slices.Sort(allow)
		shuffled := slices.Clone(allow)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		const nq, k = 20, 10
		qs := vecs(rng, nq)
		search := func(list []uint64) ([]int64, []float32) {
			keys, dists := make([]int64, nq*k), make([]float32, nq*k)
			if _, err := g.SearchFiltered(qs, k, 64, 1, &hnsw.Filter{Allow: list}, keys, dists); err != nil {
				t.Fatal(err)
			}
			return keys, dists
		}
		wantKeys, wantDists := search(shuffled)
		gotKeys, gotDists := search(allow)
		if !slices.Equal(gotKeys, wantKeys) || !slices.Equal(gotDists, wantDists) {
			t.Fatalf("%s: a sorted allow list answers otherwise than its ids looked up", stage)
		}
	}

	add(600, false)
	seal()
	add(600, true)
	if err := g.SealActive(); err != nil {
		t.Fatal(err)
	}
	check("sealed")
	if _, err := g.Remove(all[100:300]); err != nil {
		t.Fatal(err)
	}
	all = slices.Delete(all, 100, 300)
	check("after removals")
	saves := seal()

	// Loaded from the files with the removals since as tombstones.
	var loaded []*Graph
	for _, sv := range saves {
		x, err := hnsw.Load(vfs.Default, sv.File, hnsw.LoadOptions{Keys: true})
		if err != nil {
			t.Fatal(err)
		}
		s, err := LoadedGraph(x, sv.File, sv.Deleted)
		if err != nil {
			t.Fatal(err)
		}
		loaded = append(loaded, s)
	}
	g, err := Loaded(g.Config(), loaded)
	if err != nil {
		t.Fatal(err)
	}
	check("loaded")
	if n, err := g.MapSealed(func(file string) (*hnsw.Index, error) {
		return hnsw.Load(vfs.Default, file, hnsw.LoadOptions{Keys: true, MmapVectors: true})
	}); err != nil || n == 0 {
		t.Fatalf("MapSealed = %d, %v", n, err)
	}
	check("mapped")
	if err := g.Merge(g.Sealed(), 1); err != nil {
		t.Fatal(err)
	}
	check("merged")
}
