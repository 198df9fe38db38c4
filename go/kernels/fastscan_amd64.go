//go:build amd64 && !noasm

package kernels

import "unsafe"

func fastScan32(lut, block []uint8, pairs int, out *[32]uint32) {
	if !useBitAVX2 {
		fastScan32Generic(lut, block, pairs, out)
		return
	}
	fastScan32AVX2(unsafe.SliceData(lut), unsafe.SliceData(block), pairs, &out[0])
}

// fastScan32AVX2 adds fastScan32Generic's sums into out for pairs pairs
// of groups (1 <= pairs <= fastScanPassPairs), 32 bytes of codes and of
// LUT a step: VPSRLW + VPAND split the bytes into the nibbles of slots
// 0-15 and 16-31, VPSHUFB looks each nibble up in its group's table (one
// table per 128-bit lane), and the looked-up bytes are added into 16-bit
// lanes two ways, whole (even byte + 256·odd byte) and shifted (odd byte),
// so that no widening is needed in the loop; at the end the even slots are
// whole − 256·odd, the two lanes (groups) are added, the slots put in order
// and widened to 32 bits. All modulo 2¹⁶, exact since every sum is below
// 2¹⁶. The caller has checked the lengths.
//
//go:noescape
func fastScan32AVX2(lut *uint8, codes *uint8, pairs int, out *uint32)
