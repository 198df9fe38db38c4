package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMinMaxMatchesReference guards the assembly's extremes against the
// loop's at every length up to 100 (the 16-lane body and the Go tail),
// with the extremes at any position, NaNs (ignored), and zeros of both
// signs (a zero result is +0 on every path).
func TestMinMaxMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	reference := func(x []float32) (float32, float32) {
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, v := range x {
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
		return lo + 0, hi + 0
	}
	negZero := float32(math.Copysign(0, -1))
	for n := 0; n <= 100; n++ {
		for trial := range 4 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
				switch trial {
				case 1:
					x[i] = -float32(math.Abs(float64(x[i]))) // max below zero
				case 2:
					if i%3 == 0 {
						x[i] = float32(math.NaN())
					}
				case 3:
					x[i] = []float32{0, negZero}[rng.IntN(2)] // only zeros
				}
			}
			wantLo, wantHi := reference(x)
			withBitPath(t, func(path string) {
				lo, hi := MinMax(x)
				if math.Float32bits(lo) != math.Float32bits(wantLo) || math.Float32bits(hi) != math.Float32bits(wantHi) {
					t.Fatalf("%s n=%d trial %d: (%v, %v), reference (%v, %v)", path, n, trial, lo, hi, wantLo, wantHi)
				}
			})
		}
	}
}

// TestQuantizeMatchesReference guards the assembly's codes and sum against
// quantizeGeneric at every length up to 100, for 6- and 8-bit grids and
// values below lo and above the grid's top (clamped), with guard bytes
// after the codes that must stay untouched.
func TestQuantizeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for n := 0; n <= 100; n++ {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		lo, hi := MinMax(x)
		for _, top := range []int{63, 255} {
			inv := float32(top) / (hi - lo) * 0.9 // the values past 0.9 of the range clamp to top
			lower := lo + 0.25*(hi-lo)            // those below it clamp to 0
			want := make([]uint8, n)
			wantSum := quantizeGeneric(x, lower, inv, top, want)
			withBitPath(t, func(path string) {
				code := make([]uint8, n+4)
				for i := range code {
					code[i] = 0xa5
				}
				sum := Quantize(x, lower, inv, top, code[:n])
				if sum != wantSum {
					t.Fatalf("%s n=%d top=%d: sum %d, reference %d", path, n, top, sum, wantSum)
				}
				for i := range want {
					if code[i] != want[i] {
						t.Fatalf("%s n=%d top=%d: code[%d] = %d, reference %d", path, n, top, i, code[i], want[i])
					}
				}
				for _, g := range code[n:] {
					if g != 0xa5 {
						t.Fatalf("%s n=%d top=%d: wrote past the codes", path, n, top)
					}
				}
			})
		}
	}
	for _, f := range []func(){
		func() { Quantize(make([]float32, 4), 0, 1, 256, make([]uint8, 4)) },
		func() { Quantize(make([]float32, 4), 0, 1, -1, make([]uint8, 4)) },
		func() { Quantize(make([]float32, 17), 0, 1, 63, make([]uint8, 16)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}
