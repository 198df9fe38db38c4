package rabitq

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/strata-db/strata/go/kernels"
)

// hadamardRounds is the number of sign-flip + Hadamard rounds of P when D is
// a power of two.
const hadamardRounds = 3

// kacRounds is the number of sign-flip + windowed Hadamard + Kac-step
// rounds of P when D is not a power of two (RaBitQ-Library's FhtKacRotator
// uses four).
const kacRounds = 4

// Rotation is the orthogonal map P of the package doc on vectors
// zero-padded to D: H·S₃·H·S₂·H·S₁ when D is a power of two, else the
// FHT-Kac walk (RaBitQ-Library's FhtKacRotator).
type Rotation struct {
	dim, padded int
	block       int         // size of the Hadamard transforms: padded, or the largest power of two below it
	signs       [][]float32 // ±1, one row of padded per round
	blockScale  float32     // block^(-1/2), after each windowed transform (Kac rotations only)
	scale       float32     // the normalisation applied once at the end
}

// PaddedDim returns D of new codes of dim-dimensional vectors: dim rounded up
// to a multiple of 64 (at least 64), the word size of 1-bit codes and
// enough for every kernel (FastScan needs D/8 even).
func PaddedDim(dim int) int { return max(64, (dim+63)/64*64) }

// LegacyPaddedDim returns D of codes written before PaddedDim: the power of
// two at least max(dim, 64). It is the largest D NewRotationPadded accepts.
func LegacyPaddedDim(dim int) int {
	padded := 64
	for padded < dim {
		padded <<= 1
	}
	return padded
}

// NewRotation returns the rotation of dim-dimensional vectors drawn from
// seed, to D = PaddedDim(dim).
func NewRotation(dim int, seed uint64) *Rotation {
	r, err := NewRotationPadded(dim, PaddedDim(dim), seed)
	if err != nil {
		panic(err) // PaddedDim is always valid
	}
	return r
}

// NewRotationPadded returns the rotation of dim-dimensional vectors to
// padded dimensions drawn from seed: a multiple of 64 in [PaddedDim(dim),
// LegacyPaddedDim(dim)]. Its kind follows from padded alone (a power of two
// gives the Hadamard rotation, anything else the FHT-Kac walk), so a file
// that records D recreates the rotation its codes were made with.
func NewRotationPadded(dim, padded int, seed uint64) (*Rotation, error) {
	if dim <= 0 || padded%64 != 0 || padded < PaddedDim(dim) || padded > LegacyPaddedDim(dim) {
		return nil, fmt.Errorf("%w: %d is not a padded dimension of %d-dimensional codes (a multiple of 64 in [%d, %d])",
			ErrInvalidArgument, padded, dim, PaddedDim(dim), LegacyPaddedDim(dim))
	}
	r := &Rotation{dim: dim, padded: padded, block: 1 << (bits.Len(uint(padded)) - 1)}
	rounds := hadamardRounds
	if r.block != padded {
		rounds = kacRounds
	}
	rng := rand.New(rand.NewPCG(seed, 0x7261626974712d72)) // "rabitq-r"
	r.signs = make([][]float32, rounds)
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
	if r.block == padded {
		r.scale = float32(math.Pow(float64(padded), -hadamardRounds/2.0))
	} else {
		r.blockScale = float32(1 / math.Sqrt(float64(r.block)))
		r.scale = float32(math.Pow(2, -kacRounds/2.0)) // each Kac step's 1/sqrt(2), once
	}
	return r, nil
}

// Padded returns D, the dimension of rotated vectors.
func (r *Rotation) Padded() int { return r.padded }

// Apply writes P·v (v of length dim, zero-padded) to out (length Padded).
func (r *Rotation) Apply(v, out []float32) {
	out = out[:r.padded]
	copy(out, v[:r.dim])
	clear(out[r.dim:])
	if r.block == r.padded {
		for _, s := range r.signs {
			flipSigns(out, s)
			kernels.FWHT(out) // unnormalised: scale applies all rounds' 1/sqrt(D) at once
		}
	} else {
		r.applyKac(out)
	}
	for i := range out {
		out[i] *= r.scale
	}
}

// applyKac is RaBitQ-Library's FhtKacRotator without its final scale: each
// round flips signs, applies the orthonormal Hadamard transform of size
// block to the first block coordinates (even rounds) or the last (odd
// rounds), then the Kac step that maps each pair (xᵢ, xᵢ₊ₕ), h = D/2, to
// (xᵢ + xᵢ₊ₕ, xᵢ − xᵢ₊ₕ): a rotation by π/4 (times sqrt(2)) mixing the
// coordinates the window left alone into the ones it transformed. Since
// block > D/2 the two windows cover every coordinate. Every step is
// orthogonal up to its scale, so P is orthogonal.
func (r *Rotation) applyKac(out []float32) {
	D, h := r.padded, r.padded/2
	for k, s := range r.signs {
		flipSigns(out, s)
		start := 0
		if k%2 == 1 {
			start = D - r.block
		}
		w := out[start : start+r.block]
		kernels.FWHT(w)
		for i := range w {
			w[i] *= r.blockScale
		}
		a, b := out[:h], out[h:D]
		b = b[:len(a)]
		for i := range a {
			x, y := a[i], b[i]
			a[i], b[i] = x+y, x-y
		}
	}
}

func flipSigns(out, signs []float32) {
	signs = signs[:len(out)]
	for i := range out {
		out[i] *= signs[i]
	}
}
