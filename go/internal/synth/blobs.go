package synth

import "math/rand/v2"

// Blobs draws clustered synthetic vectors on demand: a mixture of
// Gaussians (centres uniform in [-1, 1]^dim, spread sigma) sharing the
// caller's generator, so that a benchmark interleaving its other random
// choices with draws gets the same sequence on every run. The segment
// benchmarks of go/collection and go/collection/segment use it (100
// blobs, spread 0.25), one generator for their data and queries alike.
type Blobs struct {
	rng     *rand.Rand
	dim     int
	sigma   float32
	centres []float32
}

// NewBlobs draws the centres of k blobs of dimension dim from rng.
func NewBlobs(rng *rand.Rand, k, dim int, sigma float32) *Blobs {
	b := &Blobs{rng: rng, dim: dim, sigma: sigma, centres: make([]float32, k*dim)}
	for i := range b.centres {
		b.centres[i] = rng.Float32()*2 - 1
	}
	return b
}

// Draw returns m row-major vectors, each from a blob chosen uniformly.
func (b *Blobs) Draw(m int) []float32 {
	return b.DrawWith(b.rng, m)
}

// DrawWith is Draw from another generator (the same blobs): a second
// goroutine draws with its own.
func (b *Blobs) DrawWith(rng *rand.Rand, m int) []float32 {
	dim, k := b.dim, len(b.centres)/b.dim
	v := make([]float32, m*dim)
	for r := range m {
		c := rng.IntN(k)
		for j := range dim {
			v[r*dim+j] = b.centres[c*dim+j] + float32(rng.NormFloat64())*b.sigma
		}
	}
	return v
}
