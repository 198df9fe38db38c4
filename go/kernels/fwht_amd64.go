//go:build amd64 && !noasm

package kernels

import "unsafe"

func fwhtWide(x []float32) {
	if !useBitAVX2 {
		fwhtWideGeneric(x)
		return
	}
	fwhtWideAVX2(unsafe.SliceData(x), len(x))
}

// fwhtWideAVX2 is fwhtWideGeneric eight lanes at a time: VADDPS and VSUBPS
// on the two halves of each block (n a power of two >= 16; the same IEEE
// operations as the reference, so the same bits).
//
//go:noescape
func fwhtWideAVX2(x *float32, n int)

// fwht8 is fwht8Generic (len(x) a multiple of 8, as FWHT checked).
func fwht8(x []float32) {
	if !useBitAVX2 {
		fwht8Generic(x)
		return
	}
	fwht8AVX2(unsafe.SliceData(x), len(x))
}

func signedFWHT8(x, signs []float32) {
	if !useBitAVX2 {
		signedFWHT8Generic(x, signs)
		return
	}
	signedFWHT8AVX2(unsafe.SliceData(x), unsafe.SliceData(signs), len(x))
}

// mulFloats, scaleFloats and butterfly take lengths that are multiples of
// 8 (the callers keep the tails).
func mulFloats(x, y []float32) {
	if !useBitAVX2 || len(x) == 0 {
		mulFloatsGeneric(x, y)
		return
	}
	mulFloatsAVX2(unsafe.SliceData(x), unsafe.SliceData(y), len(x))
}

func scaleFloats(x []float32, c float32) {
	if !useBitAVX2 || len(x) == 0 {
		scaleFloatsGeneric(x, c)
		return
	}
	scaleFloatsAVX2(unsafe.SliceData(x), c, len(x))
}

func butterfly(a, b []float32) {
	if !useBitAVX2 || len(a) == 0 {
		butterflyGeneric(a, b)
		return
	}
	butterflyAVX2(unsafe.SliceData(a), unsafe.SliceData(b), len(a))
}

// fwht8AVX2 is fwht8Generic on n elements (a positive multiple of 8), one Y
// register at a time: each stage adds every lane's partner (VPERMILPS,
// VPERM2F128) to the lane with its sign flipped above the span (VXORPS),
// the same IEEE additions as the reference, so the same bits.
//
//go:noescape
func fwht8AVX2(x *float32, n int)

// signedFWHT8AVX2 is signedFWHT8Generic: x[i] *= signs[i] (VMULPS), then
// fwht8AVX2's stages, in one pass.
//
//go:noescape
func signedFWHT8AVX2(x, signs *float32, n int)

// mulFloatsAVX2 is mulFloatsGeneric on n elements (a positive multiple of 8).
//
//go:noescape
func mulFloatsAVX2(x, y *float32, n int)

// scaleFloatsAVX2 is scaleFloatsGeneric on n elements (a positive multiple of 8).
//
//go:noescape
func scaleFloatsAVX2(x *float32, c float32, n int)

// butterflyAVX2 is butterflyGeneric on n elements (a positive multiple of 8).
//
//go:noescape
func butterflyAVX2(a, b *float32, n int)
