package hnsw

import (
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/metric"
)

// TestCopiesDoNotIslandTheGraph: a vector written again and again (a
// collection overwriting a point with the same value keeps each old copy
// as a tombstone until a vacuum) fills the neighbour lists of its copies
// with copies, and once they outnumber a list's slots the newest copies
// link only to each other. A query at that vector then walked the copies,
// never got out, and answered with the few that are live: fewer than k
// points from an index holding thousands (seen through the Qdrant door as
// 7 of 10 points). The neighbour selection keeps at most half of a list
// for copies of one vector, so the lists keep routes out.
func TestCopiesDoNotIslandTheGraph(t *testing.T) {
	racetest.AnswersOnly(t)
	for _, m := range []metric.Metric{metric.L2, metric.Cosine} {
		t.Run(m.String(), func(t *testing.T) {
			const dim, n, copies, live = 16, 3000, 300, 4
			x, err := New(Config{Dim: dim, Metric: m, M: 8, EfConstruction: 64, Seed: 1, Keys: true})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			vecs := make([]float32, n*dim)
			for i := range vecs {
				vecs[i] = float32(rng.NormFloat64())
			}
			ids := make([]uint64, n)
			for i := range ids {
				ids[i] = uint64(i)
			}
			if err := x.Add(vecs, ids, nil, 1); err != nil {
				t.Fatal(err)
			}
			v := vecs[:dim] // point 0's vector, copied under other ids one at a time
			for c := range copies {
				if err := x.Add(v, []uint64{uint64(n + c)}, nil, 1); err != nil {
					t.Fatal(err)
				}
			}
			gone := make([]uint64, 0, copies)
			for c := range copies - live {
				gone = append(gone, uint64(n+c))
			}
			if _, err := x.Remove(gone, false); err != nil {
				t.Fatal(err)
			}
			const k = 10
			outIDs, outD := make([]int64, k), make([]float32, k)
			if err := x.Search(v, k, 32, 1, outIDs, outD); err != nil {
				t.Fatal(err)
			}
			for i, id := range outIDs {
				if id == -1 {
					t.Fatalf("query at the copied vector: %d of %d points (%v), %d live in the index", i, k, outIDs, x.Len())
				}
			}
			// The live copies and the point copied are found first.
			want := map[int64]bool{0: true}
			for c := copies - live; c < copies; c++ {
				want[int64(n+c)] = true
			}
			for _, id := range outIDs[:len(want)] {
				if !want[id] {
					t.Fatalf("query at the copied vector: first %d results %v, want the point copied and its %d live copies", len(want), outIDs, live)
				}
			}
		})
	}
}
