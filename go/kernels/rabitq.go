package kernels

import "math/bits"

// RaBitQ kernels: the integer part of the 1-bit estimate of package
// go/quant/rabitq. A 1-bit code is a row of words uint64s, dimension i at bit
// i%64 of word i/64; the query is one byte per dimension. All paths compute
// the same integers (no rounding anywhere), so results are bit-identical.

// BitDotU8 returns the sum of q[i] over the set bits i of code, for
// i < 64·len(code). It panics if q is shorter than 64·len(code).
func BitDotU8(code []uint64, q []uint8) uint32 {
	q = q[:64*len(code)]
	var out [1]uint32
	ids := [1]uint32{0}
	bitDotU8Rows(q, len(code), code, len(code), ids[:], out[:])
	return out[0]
}

// BitDotU8Rows sets out[i] = BitDotU8(codes[ids[i]·stride:][:w], q) for
// every i < len(ids): w = len(q)/64 words of code at the start of each row
// of stride words (the rest of a row, stride − w words, is other data, such
// as the code's factors). It panics if len(q) is not a positive multiple of
// 64, stride < w, a code lies outside codes, or out is shorter than ids.
func BitDotU8Rows(q []uint8, codes []uint64, stride int, ids []uint32, out []uint32) {
	words := len(q) / 64
	if words == 0 || len(q) != 64*words {
		panic("kernels: BitDotU8Rows query length is not a positive multiple of 64")
	}
	if stride < words {
		panic("kernels: BitDotU8Rows stride shorter than a code")
	}
	if len(out) < len(ids) {
		panic("kernels: BitDotU8Rows output shorter than ids")
	}
	if len(ids) == 0 {
		return
	}
	if len(codes) < words {
		panic("kernels: BitDotU8Rows id outside codes")
	}
	last := uint(len(codes) - words) // start of the last whole code
	for _, id := range ids {
		if uint(id)*uint(stride) > last {
			panic("kernels: BitDotU8Rows id outside codes")
		}
	}
	bitDotU8Rows(q, words, codes, stride, ids, out[:len(ids)])
}

// bitDotU8RowsGeneric is the reference loop: it adds q[i] for each set bit.
func bitDotU8RowsGeneric(q []uint8, words int, codes []uint64, stride int, ids []uint32, out []uint32) {
	for r, id := range ids {
		code := codes[int(id)*stride : int(id)*stride+words]
		var sum uint32
		for w, word := range code {
			qw := q[w*64 : w*64+64]
			for word != 0 {
				sum += uint32(qw[bits.TrailingZeros64(word)])
				word &= word - 1
			}
		}
		out[r] = sum
	}
}

// BitDotPath names the code path of the RaBitQ kernels: "avx2" or
// "generic".
func BitDotPath() string { return bitDotPath().String() }
