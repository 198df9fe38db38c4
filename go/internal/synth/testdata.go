package synth

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Clustered returns n row-major vectors of dimension dim drawn from a
// mixture of `centers` Gaussians (centres uniform in [-1, 1], spread
// sigma), deterministic for a given seed.
func Clustered(n, dim, centers int, sigma float64, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	c := make([]float64, centers*dim)
	for i := range c {
		c[i] = rng.Float64()*2 - 1
	}
	out := make([]float32, n*dim)
	for i := 0; i < n; i++ {
		k := rng.IntN(centers)
		for j := 0; j < dim; j++ {
			out[i*dim+j] = float32(c[k*dim+j] + sigma*rng.NormFloat64())
		}
	}
	return out
}

// Distance computes a reference distance in float64: "l2" squared
// Euclidean, "l1" Manhattan, "ip" 1-dot, "cosine" 1-cos.
func Distance(metric string, a, b []float32) float64 {
	var dot, na, nb, l2, l1 float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
		l2 += (x - y) * (x - y)
		l1 += math.Abs(x - y)
	}
	switch metric {
	case "l2":
		return l2
	case "l1":
		return l1
	case "ip":
		return 1 - dot
	default:
		if na == 0 || nb == 0 {
			return 1
		}
		return 1 - dot/math.Sqrt(na*nb)
	}
}

// KNN returns, for each query, the positions in data of its k nearest rows
// under metric, nearest first (ties broken by position).
func KNN(metric string, data, queries []float32, dim, k int) [][]int {
	n := len(data) / dim
	out := make([][]int, len(queries)/dim)
	idx := make([]int, n)
	d := make([]float64, n)
	for qi := range out {
		q := queries[qi*dim : (qi+1)*dim]
		for i := 0; i < n; i++ {
			idx[i] = i
			d[i] = Distance(metric, q, data[i*dim:(i+1)*dim])
		}
		sort.Slice(idx, func(a, b int) bool {
			if d[idx[a]] != d[idx[b]] {
				return d[idx[a]] < d[idx[b]]
			}
			return idx[a] < idx[b]
		})
		out[qi] = append([]int(nil), idx[:min(k, n)]...)
	}
	return out
}

// Recall is the fraction of truth's ids found in got, row by row; got rows
// are k wide and truth rows hold the k true neighbours (as ids).
func Recall(got []int64, truth [][]uint64, k int) float64 {
	hit, total := 0, 0
	for qi, row := range truth {
		set := make(map[uint64]bool, len(row))
		for _, id := range row {
			set[id] = true
		}
		for _, id := range got[qi*k : (qi+1)*k] {
			if id >= 0 && set[uint64(id)] {
				hit++
			}
		}
		total += len(row)
	}
	return float64(hit) / float64(total)
}
