package kernels

import (
	"math/rand/v2"
	"testing"
)

// guardedU8 returns a d-byte window at offset off into buf, after filling 64
// bytes on either side of it with guard (64 covers a whole AVX-512 load).
func guardedU8(buf []uint8, off, d int, guard uint8) []uint8 {
	for i := range off {
		buf[i] = guard
	}
	for i := off + d; i < off+d+64; i++ {
		buf[i] = guard
	}
	return buf[off : off+d : off+d]
}

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
		maxDim := dims[len(dims)-1]
		bufA := make([]uint8, maxOffset+maxDim+64)
		bufB := make([]uint8, maxOffset+maxDim+64)
		for _, d := range dims {
			for off := range maxOffset {
				offB := (off*11 + 5) % maxOffset
				a := guardedU8(bufA, off, d, 255)
				b := guardedU8(bufB, offB, d, 1)
				for i := range a {
					a[i] = uint8(rng.Uint32())
					b[i] = uint8(rng.Uint32())
				}
				// Extreme bytes exercise the signed/unsigned edges of
				// VPMADDWD and VPDPBUSD.
				if off%4 == 0 {
					for i := range a {
						a[i] |= 0x80
						b[i] &= 0x81
					}
				}
				checkU8(t, d, off, offB, a, b)
			}
		}
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
