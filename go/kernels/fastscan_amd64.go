//go:build amd64 && !noasm

package kernels

import (
	"unsafe"

	"github.com/klauspost/cpuid/v2"
)

// useBitAVX512 selects the AVX-512 body of FastScan32 (VPSHUFB on 512
// bits needs AVX-512BW); tests clear it, with useBitAVX2, to compare the
// paths on one machine.
var useBitAVX512 = cpuid.CPU.Supports(cpuid.AVX2, cpuid.AVX512F, cpuid.AVX512BW)

func useBitAVX512Flag() bool { return useBitAVX512 }
func setBitAVX512(on bool) {
	useBitAVX512 = on && cpuid.CPU.Supports(cpuid.AVX2, cpuid.AVX512F, cpuid.AVX512BW)
}

func fastScan32(lut, block []uint8, pairs int, out *[32]uint32) {
	switch {
	case useBitAVX512 && pairs%2 == 0:
		fastScan32AVX512(unsafe.SliceData(lut), unsafe.SliceData(block), pairs/2, &out[0])
	case useBitAVX2:
		fastScan32AVX2(unsafe.SliceData(lut), unsafe.SliceData(block), pairs, &out[0])
	default:
		fastScan32Generic(lut, block, pairs, out)
	}
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

// fastScan32AVX512 is fastScan32AVX2 four groups a step, for quads
// (1 <= quads <= fastScanPassPairs/2) steps of 64 bytes of codes and of
// LUT: each 128-bit lane holds one group, as in the AVX2 body, and the
// upper 256 bits are added into the lower before the AVX2 body's tail. The
// 16-bit sums are the same integers, so the results are identical. The
// caller has checked the lengths.
//
//go:noescape
func fastScan32AVX512(lut *uint8, codes *uint8, quads int, out *uint32)
