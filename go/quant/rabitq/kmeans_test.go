package rabitq

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/kernels"
)

// referenceKMeans is KMeans as it was first written, every round run
// whether or not the assignment changed: the centroids of every index
// coded since, which skipping the rounds after Lloyd's algorithm stops
// must keep.
func referenceKMeans(data []float32, dim, k int, iterations int, seed uint64) []float32 {
	n := len(data) / dim
	rng := rand.New(rand.NewPCG(seed, 0x6b6d65616e73))
	rows := rng.Perm(n)
	if len(rows) > kmeansSampleMax {
		rows = rows[:kmeansSampleMax]
	}
	k = min(k, len(rows))
	if k == 0 {
		return make([]float32, dim)
	}
	centres := make([]float32, k*dim)
	for j := 0; j < k; j++ {
		copy(centres[j*dim:(j+1)*dim], data[rows[j]*dim:(rows[j]+1)*dim])
	}
	sums := make([]float64, k*dim)
	counts := make([]int, k)
	for range iterations {
		clear(sums)
		clear(counts)
		for _, r := range rows {
			v := data[r*dim : (r+1)*dim]
			best, bestD := 0, float32(math.Inf(1))
			for j := 0; j < k; j++ {
				if d := kernels.L2Squared(v, centres[j*dim:(j+1)*dim]); d < bestD {
					best, bestD = j, d
				}
			}
			counts[best]++
			s := sums[best*dim : (best+1)*dim]
			for i, x := range v {
				s[i] += float64(x)
			}
		}
		for j := 0; j < k; j++ {
			if counts[j] == 0 {
				continue
			}
			for i := 0; i < dim; i++ {
				centres[j*dim+i] = float32(sums[j*dim+i] / float64(counts[j]))
			}
		}
	}
	return centres
}

// TestKMeansStopsWithoutChangingCentroids: KMeans, which stops once a
// round assigns every row as the one before, returns the reference's
// centroids bit for bit, for one centroid (stops after two rounds), for
// well-separated clusters (stop early) and for noise (runs every round),
// and for a row of NaNs (assigned to centroid 0 either way).
func TestKMeansStopsWithoutChangingCentroids(t *testing.T) {
	const dim = 24
	rng := rand.New(rand.NewPCG(13, 14))
	separated := make([]float32, 3000*dim)
	for i := range separated {
		separated[i] = float32(rng.NormFloat64()*0.05 + float64(10*(i/dim%6)))
	}
	noise := make([]float32, 3000*dim)
	for i := range noise {
		noise[i] = float32(rng.NormFloat64())
	}
	withNaN := slices.Clone(noise[:500*dim])
	for i := range dim {
		withNaN[7*dim+i] = float32(math.NaN())
	}
	for name, data := range map[string][]float32{"separated": separated, "noise": noise, "nan": withNaN} {
		for _, k := range []int{1, 2, 6, 40} {
			for _, iterations := range []int{1, 2, 8, 25} {
				got, want := KMeans(data, dim, k, iterations, 3), referenceKMeans(data, dim, k, iterations, 3)
				if len(got) != len(want) {
					t.Fatalf("%s k=%d iterations=%d: %d values, reference %d", name, k, iterations, len(got), len(want))
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s k=%d iterations=%d: value %d is %v, reference %v", name, k, iterations, i, got[i], want[i])
					}
				}
			}
		}
	}
}
