//go:build amd64 && !noasm

package kernels

import "unsafe"

// minMaxWide sets *lo and *hi to the extremes of x (a positive multiple of
// 16 long) by the AVX-512 body, and reports whether it ran.
func minMaxWide(x []float32, lo, hi *float32) bool {
	if !useBitAVX512 {
		return false
	}
	*lo, *hi = minMaxAVX512(unsafe.SliceData(x), len(x))
	return true
}

// quantizeWide is quantizeGeneric on x (a positive multiple of 16 long) by
// the AVX-512 body, and reports whether it ran.
func quantizeWide(x []float32, lo, inv float32, top int, code []uint8) (int, bool) {
	if !useBitAVX512 {
		return 0, false
	}
	return quantizeAVX512(unsafe.SliceData(x), lo, inv, int32(top), unsafe.SliceData(code), len(x)), true
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
