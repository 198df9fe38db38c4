package hnsw

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/metric"
)

// TestListSearchMatchesHeaps checks that the sorted-list layer search and
// the two-heap one expand the same nodes: same answers and the same number
// of distance computations, on a graph with tombstones (which route but are
// never returned) and for every ef from below k to above listMaxEF's usual
// range. A list that dropped a candidate the heaps keep, or kept expanding
// past the bound, changes one or the other.
func TestListSearchMatchesHeaps(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim, n = 12, 3000
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = rng.Float32()
	}
	for _, m := range []metric.Metric{metric.L2, metric.Cosine} {
		x := mustNew(t, Config{Dim: dim, Metric: m, M: 8, Seed: 3})
		if err := x.Add(data, nil, nil, 2); err != nil {
			t.Fatal(err)
		}
		var gone []uint64
		for id := uint64(0); id < n; id += 4 {
			gone = append(gone, id)
		}
		if _, err := x.Remove(gone, false); err != nil {
			t.Fatal(err)
		}
		for _, ef := range []int{1, 5, 10, 40, 200, 600} {
			for qi := 0; qi < 50; qi++ {
				q := make([]float32, dim)
				for i := range q {
					q[i] = rng.Float32()
				}
				var ids [2][]int64
				var ndis [2]int64
				for side := range 2 {
					x.testing.heapsOnly = side == 0
					ids[side] = make([]int64, 10)
					dists := make([]float32, 10)
					st, err := x.SearchFiltered(q, 10, ef, 1, nil, ids[side], dists)
					if err != nil {
						t.Fatal(err)
					}
					ndis[side] = st.DistanceComputations
				}
				if !slices.Equal(ids[0], ids[1]) || ndis[0] != ndis[1] {
					t.Fatalf("%v ef=%d query %d: heaps %v (%d distances), list %v (%d)",
						m, ef, qi, ids[0], ndis[0], ids[1], ndis[1])
				}
			}
		}
	}
}
