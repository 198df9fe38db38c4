package segment

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/metric"
)

const dim = 4

func testGraphs(t *testing.T) *Graphs {
	t.Helper()
	cfg := hnsw.Config{Dim: dim, Metric: metric.L2, M: 8, EfConstruction: 64, Seed: 1, Keys: true}
	x, err := hnsw.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return NewGraphs(cfg, x, nil)
}

func vecs(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n*dim)
	for i := range v {
		v[i] = rng.Float32()
	}
	return v
}

func names() func() string {
	n := 0
	return func() string { n++; return string(rune('a' + n)) }
}

// TestGraphsKeepEachKeyInOneSegment: an overwrite moves a key from its
// sealed segment to the active graph (a tombstone, noted for the next
// snapshot), a removal removes it wherever it is, and a merge keeps the
// live keys and drops the rest.
func TestGraphsKeepEachKeyInOneSegment(t *testing.T) {
	g := testGraphs(t)
	rng := rand.New(rand.NewPCG(1, 1))
	if err := g.Add(vecs(rng, 10), []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 1); err != nil {
		t.Fatal(err)
	}
	saves, err := g.Seal(names())
	if err != nil || len(saves) != 1 || saves[0].Frozen == nil || saves[0].Live != 10 {
		t.Fatalf("seal: %+v, %v", saves, err)
	}
	if err := g.Add(vecs(rng, 2), []uint64{3, 11}, 1); err != nil {
		t.Fatal(err)
	}
	if n, err := g.Remove([]uint64{4, 11, 99}); err != nil || n != 2 {
		t.Fatalf("Remove = %d, %v; want 2", n, err)
	}
	if g.Len() != 9 || !g.Contains(3) || g.Contains(4) || g.Contains(11) {
		t.Fatalf("len %d, contains 3 %v 4 %v 11 %v", g.Len(), g.Contains(3), g.Contains(4), g.Contains(11))
	}
	saves, err = g.Seal(names())
	if err != nil || len(saves) != 2 || saves[0].Frozen != nil || !slices.Equal(saves[0].Deleted, []uint64{3, 4}) {
		t.Fatalf("second seal: %+v, %v", saves, err)
	}
	ids, _ := g.IDs()
	slices.Sort(ids)
	if !slices.Equal(ids, []uint64{0, 1, 2, 3, 5, 6, 7, 8, 9}) {
		t.Fatalf("ids %v", ids)
	}
	srcs := g.Sealed()
	if err := g.Merge(srcs, 1); err != nil {
		t.Fatal(err)
	}
	if len(g.Sealed()) != 1 || g.Tombstones() != 0 || g.Len() != 9 {
		t.Fatalf("after merge: %d segments, %d tombstones, %d live", len(g.Sealed()), g.Tombstones(), g.Len())
	}
	after, _ := g.IDs()
	slices.Sort(after)
	if !slices.Equal(after, ids) {
		t.Fatalf("merge changed the ids: %v, want %v", after, ids)
	}
}

// TestSearchAndMergeRaceWrites: searches across segments, the builder's
// adds and removals, seals and merges all at once never show a key twice
// or miss one that is live throughout (run with -race).
func TestSearchAndMergeRaceWrites(t *testing.T) {
	g := testGraphs(t)
	rng := rand.New(rand.NewPCG(2, 2))
	stable := make([]uint64, 50)
	for i := range stable {
		stable[i] = uint64(i)
	}
	stableVecs := vecs(rng, len(stable))
	if err := g.Add(stableVecs, stable, 1); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // readers: each stable key finds itself
		defer wg.Done()
		out, dists := make([]int64, 3), make([]float32, 3)
		for i := 0; !stop.Load(); i = (i + 1) % len(stable) {
			if _, err := g.SearchFiltered(stableVecs[i*dim:(i+1)*dim], 3, 64, 1, nil, out, dists); err != nil {
				t.Error(err)
				return
			}
			if out[0] != int64(i) || dists[0] != 0 || out[1] == out[0] || out[2] == out[1] {
				t.Errorf("search for %d: %v %v", i, out, dists)
				return
			}
		}
	}()
	go func() { // merges
		defer wg.Done()
		for !stop.Load() {
			if srcs := g.Sealed(); len(srcs) >= 2 {
				if err := g.Merge(srcs[:2], 1); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	for round := range 30 {
		keys := []uint64{uint64(100 + rng.IntN(50)), uint64(150 + round)}
		if err := g.Add(vecs(rng, 2), keys, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Remove([]uint64{uint64(100 + rng.IntN(50))}); err != nil {
			t.Fatal(err)
		}
		if round%3 == 0 {
			if _, err := g.Seal(names()); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	ids, _ := g.IDs()
	seen := map[uint64]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("key %d live twice", id)
		}
		seen[id] = true
	}
	for _, id := range stable {
		if !seen[id] {
			t.Fatalf("stable key %d lost", id)
		}
	}
}

// TestRetiredSegmentClosesOnce: a reader that loaded the state before a
// swap pins a segment already retired and closed, sees it retired and
// lets go; that brings its count back to retiredPins, and the segment
// must not close (and close its released channel) a second time.
func TestRetiredSegmentClosesOnce(t *testing.T) {
	cfg := hnsw.Config{Dim: dim, Metric: metric.L2, M: 8, EfConstruction: 64, Seed: 1, Keys: true}
	x, err := hnsw.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &Graph{index: x, released: make(chan struct{})}
	stale := &graphState{active: x, sealed: []*Graph{s}}
	s.retire() // no reader: closes now
	select {
	case <-s.released:
	default:
		t.Fatal("a retired segment no reader holds is not released")
	}
	for range 3 {
		if stale.pin() {
			t.Fatal("pinned a state holding a retired segment")
		}
	}
	if got := s.pins.Load(); got != retiredPins {
		t.Fatalf("pin count %d after the stale pins let go, want retiredPins", got)
	}
}
