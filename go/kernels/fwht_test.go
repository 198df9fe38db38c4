package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFWHTMatchesReference guards the assembly stages against any bit of
// difference from the reference loop, and the whole transform against the
// definition H[i][j] = (-1)^popcount(i&j), for every size up to 4096.
func TestFWHTMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for n := 8; n <= 4096; n *= 2 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		want := make([]float64, n)
		if n <= 512 {
			for i := range want {
				for j, v := range x {
					if popcount(i&j)%2 == 0 {
						want[i] += float64(v)
					} else {
						want[i] -= float64(v)
					}
				}
			}
		}
		ref := append([]float32(nil), x...)
		fwht8(ref)
		fwhtWideGeneric(ref)
		withBitPath(t, func(path string) {
			got := append([]float32(nil), x...)
			FWHT(got)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("%s n=%d: [%d] = %v, reference %v", path, n, i, got[i], ref[i])
				}
				if n <= 512 && math.Abs(float64(got[i])-want[i]) > 1e-3*math.Sqrt(float64(n)) {
					t.Fatalf("%s n=%d: [%d] = %v, definition %v", path, n, i, got[i], want[i])
				}
			}
		})
	}
	for _, n := range []int{0, 4, 12, 100} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("n=%d: no panic", n)
				}
			}()
			FWHT(make([]float32, n))
		}()
	}
}

func popcount(v int) int {
	c := 0
	for ; v != 0; v &= v - 1 {
		c++
	}
	return c
}

// BenchmarkFWHT reports the transform's time per call (RaBitQ runs three
// per query).
func BenchmarkFWHT(b *testing.B) {
	for _, n := range []int{128, 512, 1024} { // 512 is the FHT-Kac walk's block at d = 784
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i%7) - 3
		}
		withBitPath(b, func(path string) {
			b.Run(fmt.Sprintf("%s/n=%d", path, n), func(b *testing.B) {
				for b.Loop() {
					FWHT(x)
					for i := range x { // keep the values bounded
						x[i] *= 1 / float32(math.Sqrt(float64(n)))
					}
				}
			})
		})
	}
}
