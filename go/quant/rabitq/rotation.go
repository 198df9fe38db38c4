package rabitq

import (
	"math"
	"math/rand/v2"

	"github.com/strata-db/strata/go/kernels"
)

// rotationRounds is the number of sign-flip + Hadamard rounds of P.
const rotationRounds = 3

// Rotation is the orthogonal map P = H·S₃·H·S₂·H·S₁ of the package doc on
// vectors zero-padded to a power of two.
type Rotation struct {
	dim, padded int
	signs       [rotationRounds][]float32 // ±1
	scale       float32                   // padded^(-rounds/2): H's normalisation, once
}

// NewRotation returns the rotation of dim-dimensional vectors drawn from seed.
func NewRotation(dim int, seed uint64) *Rotation {
	padded := 64
	for padded < dim {
		padded <<= 1
	}
	r := &Rotation{dim: dim, padded: padded}
	rng := rand.New(rand.NewPCG(seed, 0x7261626974712d72)) // "rabitq-r"
	for k := range r.signs {
		s := make([]float32, padded)
		for i := range s {
			if rng.Uint64()&1 == 0 {
				s[i] = 1
			} else {
				s[i] = -1
			}
		}
		r.signs[k] = s
	}
	r.scale = float32(math.Pow(float64(padded), -rotationRounds/2.0))
	return r
}

// Padded returns D, the dimension of rotated vectors.
func (r *Rotation) Padded() int { return r.padded }

// Apply writes P·v (v of length dim, zero-padded) to out (length Padded).
func (r *Rotation) Apply(v, out []float32) {
	out = out[:r.padded]
	copy(out, v[:r.dim])
	clear(out[r.dim:])
	for k := range r.signs {
		s := r.signs[k][:len(out)]
		for i := range out {
			out[i] *= s[i]
		}
		kernels.FWHT(out) // unnormalised: scale applies all rounds' 1/sqrt(D) at once
	}
	for i := range out {
		out[i] *= r.scale
	}
}
