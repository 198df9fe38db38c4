package indexfile

// crcCombine returns the CRC-32C of a‖b from crcA = CRC(a), crcB = CRC(b)
// and len(b) (zlib's crc32_combine: appending lenB zero bits to a is a
// linear map over GF(2), applied by repeated squaring of the one-zero-bit
// operator). It lets the pieces of a large section be checksummed in
// parallel and still be compared with the one CRC the table stores.
func crcCombine(crcA, crcB uint32, lenB uint64) uint32 {
	if lenB == 0 {
		return crcA
	}
	var even, odd [32]uint32
	odd[0] = 0x82f63b78 // Castagnoli, reversed: the operator for one zero bit
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four
	// Each pass squares the operator (eight zero bits, i.e. one zero byte,
	// first) and applies it for the set bits of lenB.
	for {
		gf2Square(&even, &odd)
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		if lenB >>= 1; lenB == 0 {
			break
		}
	}
	return crcA ^ crcB
}

func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat *[32]uint32) {
	for n := range 32 {
		square[n] = gf2Times(mat, mat[n])
	}
}
