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
