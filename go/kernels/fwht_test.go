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
		fwht8Generic(ref)
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

// TestRotationStepsMatchReference guards SignedFWHT, Mul, Scale and
// Butterfly against any bit of difference from their reference loops
// (SignedFWHT: the sign flips, then FWHT's own reference), at every length
// up to 100 for the element-wise steps (the assembly's multiples of 8 and
// the Go tails) and every FWHT size up to 4096, with guard values after
// the slices that must stay untouched, and signs of any magnitude (a
// Kac rotation's sign rows carry its scales).
func TestRotationStepsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const guard = float32(-12345.5)
	// fresh is a copy of v with three guard values past its length, in
	// its capacity.
	fresh := func(v []float32) []float32 {
		x := make([]float32, len(v)+3)
		copy(x, v)
		x[len(v)], x[len(v)+1], x[len(v)+2] = guard, guard, guard
		return x[:len(v)]
	}
	random := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	checkSame := func(path, what string, n int, got, want []float32) {
		t.Helper()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s %s n=%d: [%d] = %v, reference %v", path, what, n, i, got[i], want[i])
			}
		}
		for _, g := range got[len(want):cap(got)] {
			if g != guard {
				t.Fatalf("%s %s n=%d: wrote past the slice", path, what, n)
			}
		}
	}
	for n := 8; n <= 4096; n *= 2 {
		x, signs := random(n), random(n)
		ref := append([]float32(nil), x...)
		mulFloatsGeneric(ref, signs)
		fwht8Generic(ref)
		fwhtWideGeneric(ref)
		withBitPath(t, func(path string) {
			got := fresh(x)
			SignedFWHT(got, signs)
			checkSame(path, "SignedFWHT", n, got, ref)
		})
	}
	for n := 0; n <= 100; n++ {
		x, y := random(n), random(n)
		c := float32(rng.NormFloat64())
		mul, scale := append([]float32(nil), x...), append([]float32(nil), x...)
		a, b := append([]float32(nil), x...), append([]float32(nil), y...)
		for i := range x {
			mul[i] = x[i] * y[i]
			scale[i] = x[i] * c
			a[i], b[i] = x[i]+y[i], x[i]-y[i]
		}
		withBitPath(t, func(path string) {
			got := fresh(x)
			Mul(got, y)
			checkSame(path, "Mul", n, got, mul)
			got = fresh(x)
			Scale(got, c)
			checkSame(path, "Scale", n, got, scale)
			ga, gb := fresh(x), fresh(y)
			Butterfly(ga, gb)
			checkSame(path, "Butterfly a", n, ga, a)
			checkSame(path, "Butterfly b", n, gb, b)
		})
	}
	for _, f := range []func(){
		func() { SignedFWHT(make([]float32, 12), make([]float32, 12)) },
		func() { SignedFWHT(make([]float32, 16), make([]float32, 8)) },
		func() { Mul(make([]float32, 9), make([]float32, 8)) },
		func() { Butterfly(make([]float32, 9), make([]float32, 8)) },
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
