//go:build amd64 && !noasm

package kernels

import (
	"unsafe"

	"github.com/klauspost/cpuid/v2"
)

// useBitAVX2 selects the AVX2 body of the RaBitQ kernels; tests clear it
// to compare against the generic loop on the same machine.
var useBitAVX2 = cpuid.CPU.Supports(cpuid.AVX2)

func bitDotU8Rows(q []uint8, words int, codes []uint64, stride int, ids []uint32, out []uint32) {
	if !useBitAVX2 || len(ids) == 0 {
		bitDotU8RowsGeneric(q, words, codes, stride, ids, out)
		return
	}
	bitDotU8RowsAVX2(unsafe.SliceData(q), words, unsafe.SliceData(codes), stride, unsafe.SliceData(ids), len(ids), unsafe.SliceData(out))
}

func bitDotPath() path {
	if useBitAVX2 {
		return pathAVX2
	}
	return pathGeneric
}

// bitDotU8RowsAVX2 computes bitDotU8RowsGeneric for n ids, 32 dimensions
// a step: VPBROADCASTD + VPSHUFB copy byte j of a 32-bit chunk of the code
// into bytes 8j..8j+7, VPAND + VPCMPEQB with 1<<(p%8) turn that into a
// 0x00/0xff byte mask per dimension, VPAND keeps the query bytes of the set
// bits and VPSADBW against zero adds them into four 64-bit lanes (two
// accumulators, one per half of a word), summed once per code. The caller
// has checked every id. (An AVX-512 body, one KMOVQ-masked VMOVDQU8 per
// word, is the next step; this machine has no AVX-512 to test it on.)
//
//go:noescape
func bitDotU8RowsAVX2(q *uint8, words int, codes *uint64, stride int, ids *uint32, n int, out *uint32)

func useBitAVXFlag() bool { return useBitAVX2 }
func setBitAVX(on bool)   { useBitAVX2 = on && cpuid.CPU.Supports(cpuid.AVX2) }
