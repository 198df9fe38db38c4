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

// guardPad guard elements follow each window: more than one full vector
// load of either element type.
const guardPad = 64

// forEachWindow calls check for every length in dims and every start offset
// 0..15 of a (b at a different offset), with a and b windows into buffers
// whose elements before and after the window hold guardA and guardB, and
// whose contents fill has just written.
func forEachWindow[T float32 | uint8](dims []int, guardA, guardB T, fill func(a, b []T), check func(d, offA, offB int, a, b []T)) {
	maxDim := slices.Max(dims)
	bufA := make([]T, maxOffset+maxDim+guardPad)
	bufB := make([]T, maxOffset+maxDim+guardPad)
	for _, d := range dims {
		for offA := range maxOffset {
			offB := (offA*7 + 3) % maxOffset
			a, b := guarded(bufA, offA, d, guardA), guarded(bufB, offB, d, guardB)
			fill(a, b)
			check(d, offA, offB, a, b)
		}
	}
}

// guarded returns buf[off:off+d] after filling the off elements before it
// and the guardPad elements after it with guard.
func guarded[T float32 | uint8](buf []T, off, d int, guard T) []T {
	for i := range off {
		buf[i] = guard
	}
	for i := off + d; i < off+d+guardPad; i++ {
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

func l1Ref(a, b []float32) (sum, absSum float64) {
	for i := range a {
		sum += math.Abs(float64(a[i]) - float64(b[i]))
	}
	return sum, sum
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
		fill := func(a, b []float32) {
			for i := range a {
				a[i], b[i] = rng.Float32()*2-1, rng.Float32()*2-1
			}
		}
		forEachWindow(testDims(), float32(math.NaN()), math.MaxFloat32, fill, func(d, offA, offB int, a, b []float32) {
			t.Helper()
			for _, k := range []struct {
				name string
				got  float32
				ref  func(a, b []float32) (float64, float64)
			}{{"Dot", Dot(a, b), dotRef}, {"L2Squared", L2Squared(a, b), l2Ref}, {"L1", L1(a, b), l1Ref}} {
				want, absSum := k.ref(a, b)
				if tol := f32Tolerance(d, absSum); !(math.Abs(float64(k.got)-want) <= tol) {
					t.Fatalf("%s d=%d offsets=%d,%d: got %v, want %v ± %g", k.name, d, offA, offB, k.got, want, tol)
				}
			}
		})
	})
}

// TestFloatKernelsExactOnSmallIntegers prevents skipped, repeated or
// misaligned elements: with integer inputs in [-8, 8] every product and
// partial sum is an integer below 2^24 (1536·16² < 2^24), so every float32
// operation is exact in any order and each path must equal the reference
// bit for bit.
func TestFloatKernelsExactOnSmallIntegers(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		fill := func(a, b []float32) {
			for i := range a {
				a[i], b[i] = float32(rng.IntN(17)-8), float32(rng.IntN(17)-8)
			}
		}
		forEachWindow(testDims(), math.MaxFloat32, float32(math.NaN()), fill, func(d, offA, offB int, a, b []float32) {
			// The generic loops are checked directly too: on amd64 they
			// are otherwise reached only through the assembly stubs.
			dot, _ := dotRef(a, b)
			l2, _ := l2Ref(a, b)
			if got, gen := Dot(a, b), dotGeneric(a, b); got != float32(dot) || gen != float32(dot) {
				t.Fatalf("Dot d=%d offsets=%d,%d: got %v, generic %v, want %v", d, offA, offB, got, gen, dot)
			}
			if got, gen := L2Squared(a, b), l2Generic(a, b); got != float32(l2) || gen != float32(l2) {
				t.Fatalf("L2Squared d=%d offsets=%d,%d: got %v, generic %v, want %v", d, offA, offB, got, gen, l2)
			}
			l1, _ := l1Ref(a, b)
			if got, gen := L1(a, b), l1Generic(a, b); got != float32(l1) || gen != float32(l1) {
				t.Fatalf("L1 d=%d offsets=%d,%d: got %v, generic %v, want %v", d, offA, offB, got, gen, l1)
			}
		})
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
			if got := L1(a, b); got != float32(d) {
				t.Fatalf("L1 d=%d: got %v, want %v", d, got, d)
			}
		}
	})
}

func TestEmptyVectorsGiveZero(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		if Dot(nil, nil) != 0 || L2Squared(nil, nil) != 0 || L1(nil, nil) != 0 || DotU8(nil, nil) != 0 || L2U8(nil, nil) != 0 {
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
	mustPanic("L1", func() { L1(a, b) })
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
			_ = Dot(a[:], b[:]) + L2Squared(a[:], b[:]) + L1(a[:], b[:])
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
