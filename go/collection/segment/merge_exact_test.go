package segment

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/hnsw"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// splitGraphs builds the rows of data (key i = row i) into segs sealed
// segments of consecutive keys, then overwrites the keys of overwrite
// (new rows, in the active graph) and removes those of removed.
func splitGraphs(t *testing.T, d int, data []float32, segs int, overwrite []uint64, newRows []float32, removed []uint64) *Graphs {
	t.Helper()
	cfg := hnsw.Config{Dim: d, Metric: metric.L2, M: 8, EfConstruction: 64, Seed: 1, Keys: true}
	n := len(data) / d
	var sealed []*Graph
	for s := range segs {
		lo, hi := s*n/segs, (s+1)*n/segs
		x, err := hnsw.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]uint64, 0, hi-lo)
		for key := lo; key < hi; key++ {
			keys = append(keys, uint64(key))
		}
		if err := x.Add(data[lo*d:hi*d], keys, nil, 1); err != nil {
			t.Fatal(err)
		}
		g, err := LoadedGraph(x, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		sealed = append(sealed, g)
	}
	active, err := hnsw.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := NewGraphs(cfg, active, sealed)
	if len(overwrite) > 0 {
		if err := g.Add(newRows, overwrite, 1); err != nil {
			t.Fatal(err)
		}
	}
	if len(removed) > 0 {
		if _, err := g.Remove(removed); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// TestSearchAcrossSegmentsIsExactWhenKCoversLive: with k at least the
// live keys, a search across segments returns every live key once,
// overwritten keys at their new vector, removed keys never, the filter
// respected, ordered by distance.
func TestSearchAcrossSegmentsIsExactWhenKCoversLive(t *testing.T) {
	const d, n = 8, 300
	rng := rand.New(rand.NewPCG(3, 3))
	data := synth.NewBlobs(rng, 5, d, 0.3).Draw(n)
	overwrite := []uint64{1, 120, 250}
	newRows := synth.NewBlobs(rng, 1, d, 0.3).Draw(len(overwrite))
	removed := []uint64{2, 121, 299}
	g := splitGraphs(t, d, data, 3, overwrite, newRows, removed)
	live := g.Len()
	if live != n-len(removed) {
		t.Fatalf("live %d, want %d", live, n-len(removed))
	}
	rowOf := func(key uint64) []float32 {
		if i := slices.Index(overwrite, key); i >= 0 {
			return newRows[i*d : (i+1)*d]
		}
		return data[int(key)*d : (int(key)+1)*d]
	}
	var odd []uint64
	for key := uint64(1); key < n; key += 2 {
		odd = append(odd, key)
	}
	for _, filter := range []*hnsw.Filter{nil, {Allow: odd}} {
		k := live + 5
		for qi := range 20 {
			q := data[qi*7*d : (qi*7+1)*d]
			var want []uint64
			for key := uint64(0); key < n; key++ {
				if slices.Contains(removed, key) || (filter != nil && key%2 == 0) {
					continue
				}
				want = append(want, key)
			}
			slices.SortStableFunc(want, func(a, b uint64) int {
				return cmp.Compare(metric.L2.Distance(q, rowOf(a)), metric.L2.Distance(q, rowOf(b)))
			})
			keys, dists := make([]int64, k), make([]float32, k)
			if _, err := g.SearchFiltered(q, k, k, 1, filter, keys, dists); err != nil {
				t.Fatal(err)
			}
			for i, key := range keys {
				if i >= len(want) {
					if key != -1 || !math.IsInf(float64(dists[i]), 1) {
						t.Fatalf("query %d: row %d is %d (%v), want padding", qi, i, key, dists[i])
					}
					continue
				}
				if got := metric.L2.Distance(q, rowOf(uint64(key))); key < 0 || dists[i] != got {
					t.Fatalf("query %d: row %d key %d distance %v, its vector's is %v", qi, i, key, dists[i], got)
				}
				if w := metric.L2.Distance(q, rowOf(want[i])); dists[i] != w {
					t.Fatalf("query %d: row %d distance %v, exact order has %v (key %d)", qi, i, dists[i], w, want[i])
				}
			}
			slices.Sort(keys[:len(want)])
			slices.Sort(want)
			for i := range want {
				if keys[i] != int64(want[i]) {
					t.Fatalf("query %d: keys %v, want %v", qi, keys[:len(want)], want)
				}
			}
		}
	}
}
