package rabitq

import (
	"math"
	"math/rand/v2"

	"github.com/strata-db/strata/go/kernels"
)

// kmeansIterations is the number of Lloyd rounds NewClustered runs; the
// centroids only need to shorten residuals, not to converge.
const kmeansIterations = 8

// kmeansSampleMax bounds the rows KMeans clusters: a fixed-seed sample of a
// larger input is enough to place the centroids.
const kmeansSampleMax = 16384

// KMeans returns up to k centroids (rows of dim) of data by Lloyd's
// algorithm from k distinct rows drawn with seed, over at most
// kmeansSampleMax rows; a centroid left without members keeps its place.
// Deterministic for a given input and seed.
func KMeans(data []float32, dim, k int, iterations int, seed uint64) []float32 {
	n := len(data) / dim
	rng := rand.New(rand.NewPCG(seed, 0x6b6d65616e73)) // "kmeans"
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
	// A round that assigns every row as the last one did would compute
	// the same centres again, and so would every round after it: Lloyd's
	// algorithm has stopped, and the rounds left are skipped (one
	// centroid, the quantized graph's, stops after its second round).
	assigned := make([]int32, len(rows))
	for round := range iterations {
		changed := false
		for i, r := range rows {
			v := data[r*dim : (r+1)*dim]
			best, bestD := 0, float32(math.Inf(1))
			if k > 1 {
				for j := 0; j < k; j++ {
					if d := kernels.L2Squared(v, centres[j*dim:(j+1)*dim]); d < bestD {
						best, bestD = j, d
					}
				}
			}
			if round == 0 || assigned[i] != int32(best) {
				assigned[i], changed = int32(best), true
			}
		}
		if !changed {
			break
		}
		clear(sums)
		clear(counts)
		for i, r := range rows {
			best := int(assigned[i])
			counts[best]++
			s := sums[best*dim : (best+1)*dim]
			for d, x := range data[r*dim : (r+1)*dim] {
				s[d] += float64(x)
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
