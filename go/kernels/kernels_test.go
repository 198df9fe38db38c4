package kernels

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// forEachPath runs fn once per kernel path this build and CPU can run, with
// the exported kernels dispatching to that path.
func forEachPath(t *testing.T, fn func(t *testing.T)) {
	for _, p := range detectedPaths() {
		restore := setPath(p)
		t.Run(p.String(), fn)
		restore()
	}
}

// testDims is every length up to 300 (all tail and block combinations of
// every path), then a stride up to 1536 plus the common embedding sizes.
func testDims() []int {
	var dims []int
	for d := 1; d <= 300; d++ {
		dims = append(dims, d)
	}
	for d := 301; d <= 1536; d += 37 {
		dims = append(dims, d)
	}
	dims = append(dims, 384, 512, 768, 1024, 1535, 1536)
	slices.Sort(dims)
	return slices.Compact(dims)
}

const maxOffset = 16 // slices start at element offsets 0..15 into their buffer

// guardedF32 returns a d-element window at offset off into buf, after
// filling 16 elements on either side of it with guard.
func guardedF32(buf []float32, off, d int, guard float32) []float32 {
	for i := range off {
		buf[i] = guard
	}
	for i := off + d; i < off+d+16; i++ {
		buf[i] = guard
	}
	return buf[off : off+d : off+d]
}

func dotRef(a, b []float32) (sum, absSum float64) {
	for i := range a {
		t := float64(a[i]) * float64(b[i])
		sum += t
		absSum += math.Abs(t)
	}
	return sum, absSum
}

func l2Ref(a, b []float32) (sum, absSum float64) {
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		sum += d * d
	}
	return sum, sum
}

// f32Tolerance bounds |kernel - exact| for a float32 kernel over d terms
// whose absolute values sum to absSum.
//
// Each term t_i reaches the result through at most k roundings, so the error
// is at most Σ|t_i|·((1+u)^k - 1) ≈ k·u·Σ|t_i| with u = 2^-24. The longest
// path is the generic loop: one rounding for the product (two more for the
// L2 difference squared), ceil(d/4) additions into its accumulator and two to
// combine the accumulators. The SIMD paths chain only ceil(d/32) or
// ceil(d/64) FMAs per lane, plus up to 7 reduction additions. k =
// ceil(d/4)+10 covers every path; the 1.01 absorbs the second-order terms.
// The bound is deterministic (no statistical assumption about the data), so
// the test cannot flake; missed or repeated elements are caught exactly by
// TestFloatKernelsExactOnSmallIntegers instead.
func f32Tolerance(d int, absSum float64) float64 {
	const u = 1.0 / (1 << 24)
	k := float64((d+3)/4 + 10)
	return 1.01 * k * u * absSum
}

// TestFloatKernelsMatchFloat64Reference prevents precision or indexing bugs
// in any path on random data, for every length and both operand alignments,
// and catches reads past either end through NaN and MaxFloat32 guards.
func TestFloatKernelsMatchFloat64Reference(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		dims := testDims()
		maxDim := dims[len(dims)-1]
		bufA := make([]float32, maxOffset+maxDim+16)
		bufB := make([]float32, maxOffset+maxDim+16)
		for _, d := range dims {
			for off := range maxOffset {
				offB := (off*7 + 3) % maxOffset
				a := guardedF32(bufA, off, d, float32(math.NaN()))
				b := guardedF32(bufB, offB, d, math.MaxFloat32)
				for i := range a {
					a[i] = rng.Float32()*2 - 1
					b[i] = rng.Float32()*2 - 1
				}
				checkFloat(t, "Dot", Dot(a, b), d, off, offB)(dotRef(a, b))
				checkFloat(t, "L2Squared", L2Squared(a, b), d, off, offB)(l2Ref(a, b))
			}
		}
	})
}

func checkFloat(t *testing.T, name string, got float32, d, offA, offB int) func(want, absSum float64) {
	return func(want, absSum float64) {
		t.Helper()
		if tol := f32Tolerance(d, absSum); !(math.Abs(float64(got)-want) <= tol) {
			t.Fatalf("%s d=%d offsets=%d,%d: got %v, want %v ± %g", name, d, offA, offB, got, want, tol)
		}
	}
}

// TestFloatKernelsExactOnSmallIntegers prevents skipped, repeated or
// misaligned elements: with integer inputs in [-8, 8] every product and
// partial sum is an integer below 2^24 (1536·16² < 2^24), so every float32
// operation is exact in any order and each path must equal the reference
// bit for bit.
func TestFloatKernelsExactOnSmallIntegers(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		dims := testDims()
		maxDim := dims[len(dims)-1]
		bufA := make([]float32, maxOffset+maxDim+16)
		bufB := make([]float32, maxOffset+maxDim+16)
		for _, d := range dims {
			for off := range maxOffset {
				offB := (off*5 + 9) % maxOffset
				a := guardedF32(bufA, off, d, math.MaxFloat32)
				b := guardedF32(bufB, offB, d, float32(math.NaN()))
				for i := range a {
					a[i] = float32(rng.IntN(17) - 8)
					b[i] = float32(rng.IntN(17) - 8)
				}
				// The generic loops are checked directly too: on amd64 they
				// are otherwise reached only through the assembly stubs.
				if want, _ := dotRef(a, b); Dot(a, b) != float32(want) || dotGeneric(a, b) != float32(want) {
					t.Fatalf("Dot d=%d offsets=%d,%d: got %v, want %v", d, off, offB, Dot(a, b), want)
				}
				if want, _ := l2Ref(a, b); L2Squared(a, b) != float32(want) || l2Generic(a, b) != float32(want) {
					t.Fatalf("L2Squared d=%d offsets=%d,%d: got %v, want %v", d, off, offB, L2Squared(a, b), want)
				}
			}
		}
	})
}

// TestFloatKernelsIgnoreTailOfLongerB prevents kernels from using len(b)
// instead of len(a): b may be longer, and its extra elements must not count.
func TestFloatKernelsIgnoreTailOfLongerB(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for _, d := range []int{1, 7, 16, 33, 100, 768} {
			a := make([]float32, d)
			b := make([]float32, d+64)
			for i := range a {
				a[i], b[i] = 1, 2
			}
			for i := d; i < len(b); i++ {
				b[i] = float32(math.NaN())
			}
			if got := Dot(a, b); got != float32(2*d) {
				t.Fatalf("Dot d=%d: got %v, want %v", d, got, 2*d)
			}
			if got := L2Squared(a, b); got != float32(d) {
				t.Fatalf("L2Squared d=%d: got %v, want %v", d, got, d)
			}
		}
	})
}

func TestEmptyVectorsGiveZero(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		if Dot(nil, nil) != 0 || L2Squared(nil, nil) != 0 || DotU8(nil, nil) != 0 || L2U8(nil, nil) != 0 {
			t.Fatal("empty input gave a non-zero result")
		}
	})
}

// TestShortBPanicsInsteadOfReadingPastEnd prevents out-of-bounds reads
// when a caller passes a b shorter than a (and without spare capacity).
func TestShortBPanicsInsteadOfReadingPastEnd(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s with short b did not panic", name)
			}
		}()
		f()
	}
	a, b := make([]float32, 8), make([]float32, 4)
	mustPanic("Dot", func() { Dot(a, b) })
	mustPanic("L2Squared", func() { L2Squared(a, b) })
	a8, b8 := make([]uint8, 8), make([]uint8, 4)
	mustPanic("DotU8", func() { DotU8(a8, b8) })
	mustPanic("L2U8", func() { L2U8(a8, b8) })
}

// TestKernelsDoNotAllocate prevents heap allocations (escaping arguments
// or boxing) on the distance hot path.
func TestKernelsDoNotAllocate(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		var a, b [128]float32
		var a8, b8 [128]uint8
		allocs := testing.AllocsPerRun(100, func() {
			_ = Dot(a[:], b[:]) + L2Squared(a[:], b[:])
			_ = DotU8(a8[:], b8[:]) + L2U8(a8[:], b8[:])
		})
		if allocs != 0 {
			t.Fatalf("kernels allocated %v times per run", allocs)
		}
	})
}

// TestSetPathSelectsEachPath prevents the tests above from silently running
// one path under several names.
func TestSetPathSelectsEachPath(t *testing.T) {
	for _, p := range detectedPaths() {
		restore := setPath(p)
		if got := floatPath(); got > p {
			t.Errorf("setPath(%v): float path %v", p, got)
		}
		if got := u8Path(); got > p {
			t.Errorf("setPath(%v): u8 path %v", p, got)
		}
		if Path() != floatPath().String() || PathU8() != u8Path().String() {
			t.Errorf("Path()=%q PathU8()=%q disagree with %v/%v", Path(), PathU8(), floatPath(), u8Path())
		}
		restore()
	}
	t.Logf("default paths: float32 %s, u8 %s", Path(), PathU8())
}
