package kernels

import (
	"math/rand/v2"
	"testing"
)

func dotU8Ref(a, b []uint8) uint32 {
	var sum uint64
	for i := range a {
		sum += uint64(a[i]) * uint64(b[i])
	}
	return uint32(sum)
}

func l2U8Ref(a, b []uint8) uint32 {
	var sum uint64
	for i := range a {
		d := int64(a[i]) - int64(b[i])
		sum += uint64(d * d)
	}
	return uint32(sum)
}

// TestU8KernelsExactForAllLengthsAndOffsets prevents any rounding,
// saturation or indexing error in the SQ8 kernels: every path must equal
// the generic loop and a uint64 reference exactly, and guard bytes (a=255,
// b=1, which change both sums) catch reads past either end.
func TestU8KernelsExactForAllLengthsAndOffsets(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		dims := testDims()
		for d := 1600; d <= 4200; d += 173 {
			dims = append(dims, d)
		}
		calls := 0
		fill := func(a, b []uint8) {
			for i := range a {
				a[i], b[i] = uint8(rng.Uint32()), uint8(rng.Uint32())
			}
			// Every fourth window uses extreme bytes, the signed/unsigned
			// edges of VPMADDWD and VPDPBUSD.
			if calls++; calls%4 == 0 {
				for i := range a {
					a[i] |= 0x80
					b[i] &= 0x81
				}
			}
		}
		forEachWindow(dims, 255, 1, fill, func(d, offA, offB int, a, b []uint8) {
			checkU8(t, d, offA, offB, a, b)
		})
	})
}

func checkU8(t *testing.T, d, offA, offB int, a, b []uint8) {
	t.Helper()
	if got, gen, ref := DotU8(a, b), dotU8Generic(a, b), dotU8Ref(a, b); got != ref || gen != ref {
		t.Fatalf("DotU8 d=%d offsets=%d,%d: got %d, generic %d, want %d", d, offA, offB, got, gen, ref)
	}
	if got, gen, ref := L2U8(a, b), l2U8Generic(a, b), l2U8Ref(a, b); got != ref || gen != ref {
		t.Fatalf("L2U8 d=%d offsets=%d,%d: got %d, generic %d, want %d", d, offA, offB, got, gen, ref)
	}
}

// TestU8KernelsExactAtMaximumMagnitude prevents lane overflow: all-255
// inputs at the largest exact length (65536·255² = 4,261,478,400 < 2^32),
// and beyond it, where every path must wrap modulo 2^32 like the generic
// loop.
func TestU8KernelsExactAtMaximumMagnitude(t *testing.T) {
	forEachPath(t, func(t *testing.T) {
		for _, d := range []int{65536 - 1, 65536, 65536 + 63, 70000} {
			ones := make([]uint8, d)
			zeros := make([]uint8, d)
			for i := range ones {
				ones[i] = 255
			}
			checkU8(t, d, 0, 0, ones, ones)
			checkU8(t, d, 0, 0, ones, zeros)
			checkU8(t, d, 0, 0, zeros, ones)
			if d == 65536 {
				if got := DotU8(ones, ones); got != 4261478400 {
					t.Fatalf("DotU8 all-255 d=65536: got %d, want 4261478400", got)
				}
				if got := L2U8(ones, zeros); got != 4261478400 {
					t.Fatalf("L2U8 255 vs 0 d=65536: got %d, want 4261478400", got)
				}
			}
		}
	})
}
