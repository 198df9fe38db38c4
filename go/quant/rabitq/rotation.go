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
	signs       [][]float32 // ±1, one row of padded per round; a Kac rotation's carry its scales
	scale       float32     // the Hadamard rotation's normalisation, applied once at the end
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
		return r, nil
	}
	// Every step is linear, so the scales go into the sign rows, sparing
	// applyKac a pass over the vector for each: a window's 1/sqrt(block)
	// into the signs of its coordinates (H(c·x) = c·H(x)), the four Kac
	// steps' 1/sqrt(2) into the first row.
	blockScale := 1 / math.Sqrt(float64(r.block))
	for k, s := range r.signs {
		lo, hi := r.window(k)
		for i := range s {
			c := 1.0
			if i >= lo && i < hi {
				c = blockScale
			}
			if k == 0 {
				c *= math.Pow(2, -kacRounds/2.0)
			}
			s[i] = float32(float64(s[i]) * c)
		}
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
	if r.block != r.padded {
		r.applyKac(out)
		return
	}
	for _, s := range r.signs {
		kernels.SignedFWHT(out, s) // unnormalised: scale applies all rounds' 1/sqrt(D) at once
	}
	kernels.Scale(out, r.scale)
}

// window is the range of coordinates round k of a Kac rotation transforms:
// the first block (even rounds) or the last (odd rounds).
func (r *Rotation) window(k int) (lo, hi int) {
	if k%2 == 1 {
		return r.padded - r.block, r.padded
	}
	return 0, r.block
}

// applyKac is RaBitQ-Library's FhtKacRotator: each round flips signs,
// applies the orthonormal Hadamard transform of size block to the round's
// window (the first block coordinates or the last), then the Kac step that
// maps each pair (xᵢ, xᵢ₊ₕ), h = D/2, to (xᵢ + xᵢ₊ₕ, xᵢ − xᵢ₊ₕ)/sqrt(2): a
// rotation by π/4 mixing the coordinates the window left alone into the
// ones it transformed. Since block > D/2 the two windows cover every
// coordinate. Every step is orthogonal, so P is; the scales are in the
// sign rows (NewRotationPadded).
func (r *Rotation) applyKac(out []float32) {
	D, h := r.padded, r.padded/2
	for k, s := range r.signs {
		// The sign flips outside the window, then those inside it in the
		// pass of the transform's first stages: each coordinate is
		// multiplied once, as by one pass over out.
		lo, hi := r.window(k)
		kernels.Mul(out[:lo], s[:lo])
		kernels.Mul(out[hi:D], s[hi:D])
		kernels.SignedFWHT(out[lo:hi], s[lo:hi])
		kernels.Butterfly(out[:h], out[h:D])
	}
}
