//go:build amd64 && !noasm

package kernels

import "unsafe"

// prepAVX512 dispatches MinMax and Quantize to their AVX-512 bodies. Off:
// they were written on a machine without AVX-512 and have never run, so
// AVX-512 machines take the AVX2 bodies (bit-identical to the loops, as
// the tests check where they run) until the AVX-512 ones have passed
// TestMinMaxMatchesReference and TestQuantizeMatchesReference there.
var prepAVX512 = false

// minMaxWide sets *lo and *hi to the extremes of x (a positive multiple of
// 16 long) by an assembly body, and reports whether one ran.
func minMaxWide(x []float32, lo, hi *float32) bool {
	switch {
	case useBitAVX512 && prepAVX512:
		*lo, *hi = minMaxAVX512(unsafe.SliceData(x), len(x))
	case useBitAVX2:
		*lo, *hi = minMaxAVX2(unsafe.SliceData(x), len(x))
	default:
		return false
	}
	return true
}

// quantizeWide is quantizeGeneric on x (a positive multiple of 16 long) by
// an assembly body, and reports whether one ran. The AVX2 body takes 32
// values a step: the last 16 of an odd number of 16s go to the AVX-512
// body or the loop.
func quantizeWide(x []float32, lo, inv float32, top int, code []uint8) (int, bool) {
	switch {
	case useBitAVX512 && prepAVX512:
		return quantizeAVX512(unsafe.SliceData(x), lo, inv, int32(top), unsafe.SliceData(code), len(x)), true
	case useBitAVX2:
		n := len(x) &^ 31
		total := 0
		if n > 0 {
			total = quantizeAVX2(unsafe.SliceData(x), lo, inv, int32(top), unsafe.SliceData(code), n)
		}
		return total + quantizeGeneric(x[n:], lo, inv, top, code[n:]), true
	}
	return 0, false
}

// minMaxAVX512 returns the smallest and largest of n floats (a positive
// multiple of 16) from 16 lanes started at +Inf and -Inf: VMINPS and
// VMAXPS keep a lane's value unless the new one is strictly beyond it, so
// NaNs are ignored as by MinMax's loop, and any order of the lanes gives
// the same extremes (up to the sign of a zero, which MinMax clears).
//
//go:noescape
func minMaxAVX512(x *float32, n int) (lo, hi float32)

// quantizeAVX512 is quantizeGeneric on n floats (a positive multiple of
// 16), 16 at a time: VSUBPS, VMULPS and VADDPS round as the loop's three
// float32 operations do, VCVTTPS2DQ truncates as int() does (every value
// here is far inside int32), VPMAXSD/VPMINSD clamp, VPMOVDB narrows to
// the bytes, and the codes are summed in 32-bit lanes (n·255 fits).
//
//go:noescape
func quantizeAVX512(x *float32, lo, inv float32, top int32, code *uint8, n int) int

// minMaxAVX2 is minMaxAVX512 eight lanes at a time (n a positive multiple
// of 8).
//
//go:noescape
func minMaxAVX2(x *float32, n int) (lo, hi float32)

// quantizeAVX2 is quantizeAVX512 32 values a step (n a positive multiple
// of 32): the clamped dwords of four registers are packed to words and
// bytes (exact: every value is at most 255) within each 128-bit lane, and
// VPERMD puts the 32 bytes in order.
//
//go:noescape
func quantizeAVX2(x *float32, lo, inv float32, top int32, code *uint8, n int) int
