package kernels

import "encoding/binary"

// FastScan: the 1-bit RaBitQ estimates of 32 codes at once, by table
// lookups (André et al., "Cache locality is not enough", VLDB 2015; FAISS's
// pq4_fast_scan; RaBitQ-Library's fastscan, which SymphonyQG searches with).
//
// A code of D dimensions (D a multiple of 8) is cut into G = D/4 groups of 4
// dimensions; the 4 bits of group g (dimensions 4g..4g+3, dimension 4g in
// the lowest bit) are a number in [0, 16) that indexes the group's table of
// 16 bytes in the LUT: the LUT is G tables, lut[16g + m] = the query's
// contribution of bit pattern m (for the RaBitQ estimate, the sum of the
// query bytes of the dimensions set in m). A block holds 32 codes, slots 0
// to 31, packed for VPSHUFB, 32 bytes per pair of groups p (groups 2p and
// 2p + 1):
//
//	block[32p + 16h + j]  for h in {0, 1}, j in [0, 16):
//	                      low nibble  = group 2p+h of slot j
//	                      high nibble = group 2p+h of slot j+16
//
// so one 32-byte load meets the matching 32 bytes of the LUT (the tables of
// groups 2p and 2p+1, one per 128-bit lane). A block is 16·G = 4·D bytes.
// The sums are exact integers on every path (no rounding), so results are
// bit-identical: the AVX2 body (two groups a step) and the AVX-512BW one
// (four groups a step, chosen at run time; tables of an odd number of pairs
// go to the AVX2 body) accumulate in 16-bit lanes, exact for up to 256
// groups per pass (256·255 < 2¹⁶), and FastScan32 runs one pass per 1,024
// dimensions. On this project's AMD EPYC (Zen 4, 512-bit operations issued
// as two 256-bit halves) the AVX-512 body takes 63 ns per block at D = 512
// against 79 ns for AVX2 (best of 9, BenchmarkFastScan32).

// FastScanBlockBytes returns the size of a block of 32 codes of dims
// dimensions (dims a positive multiple of 8): 4·dims.
func FastScanBlockBytes(dims int) int { return 4 * dims }

// fastScanPassPairs is the most pairs of groups the 16-bit accumulators
// of one pass hold exactly: 128 pairs = 256 groups = 1,024 dimensions.
const fastScanPassPairs = 128

// FastScan32 sets out[j] = Σ_g lut[16g + nibble g of slot j] for the 32
// codes of block (package layout above), with G = len(lut)/16 groups. It
// panics if len(lut) is not a positive multiple of 32 (G even) or block is
// shorter than 16·G bytes.
func FastScan32(lut, block []uint8, out *[32]uint32) {
	pairs := len(lut) / 32
	if pairs == 0 || len(lut) != 32*pairs {
		panic("kernels: FastScan32 table length is not a positive multiple of 32")
	}
	if len(block) < 32*pairs {
		panic("kernels: FastScan32 block shorter than the table's groups")
	}
	*out = [32]uint32{}
	for p := 0; p < pairs; p += fastScanPassPairs {
		n := min(pairs-p, fastScanPassPairs)
		fastScan32(lut[32*p:32*(p+n)], block[32*p:32*(p+n)], n, out)
	}
}

// fastScan32Generic is the reference loop: it adds each slot's table entry
// of every group into out.
func fastScan32Generic(lut, block []uint8, pairs int, out *[32]uint32) {
	for g := 0; g < 2*pairs; g++ {
		row := block[32*(g/2)+16*(g%2):][:16]
		table := lut[16*g : 16*g+16]
		for j := 0; j < 16; j++ {
			out[j] += uint32(table[row[j]&15])
			out[j+16] += uint32(table[row[j]>>4])
		}
	}
}

// FastScanPack writes code, a 1-bit code of 64·len(code) dimensions
// (dimension i at bit i%64 of word i/64), into slot of block (FastScan32's
// layout), replacing what the slot held. It panics if slot is outside
// [0, 32) or block is shorter than FastScanBlockBytes(64·len(code)).
func FastScanPack(block []uint8, slot int, code []uint64) {
	if slot < 0 || slot >= 32 {
		panic("kernels: FastScanPack slot outside [0, 32)")
	}
	groups := 16 * len(code)
	block = block[:FastScanBlockBytes(64*len(code))]
	shift, keep := uint(4*(slot/16)), uint8(0xf0)>>(4*(slot/16))
	for g := 0; g < groups; g++ {
		nibble := uint8(code[g/16]>>(4*(g%16))) & 15
		b := &block[32*(g/2)+16*(g%2)+slot%16]
		*b = *b&keep | nibble<<shift
	}
}

// FastScanPackBlock writes the 32 codes of one block at once (code j into
// slot j; a nil code is all zeros), each of words words: FastScanPack of
// every slot, one byte per pair of slots instead of one nibble per slot.
// It panics if a code is not words long or block is shorter than
// FastScanBlockBytes(64·words).
func FastScanPackBlock(block []uint8, words int, codes *[32][]uint64) {
	block = block[:FastScanBlockBytes(64*words)]
	for w := 0; w < words; w++ {
		var lo, hi [16]uint64 // word w of slots j and j+16
		for j := 0; j < 16; j++ {
			lo[j], hi[j] = wordOf(codes[j], w, words), wordOf(codes[j+16], w, words)
		}
		// Word w holds groups 16w .. 16w+15: pairs 8w .. 8w+7.
		out := block[256*w : 256*(w+1)]
		for g := 0; g < 16; g++ {
			row := out[16*g : 16*g+16] // pair 8w + g/2, half g%2: offset 32·(g/2) + 16·(g%2) = 16g
			shift := uint(4 * g)
			for j := 0; j < 16; j++ {
				row[j] = uint8(lo[j]>>shift)&15 | uint8(hi[j]>>shift)<<4
			}
		}
	}
}

// wordOf is code[w], or 0 for a nil code; it panics if code is not words long.
func wordOf(code []uint64, w, words int) uint64 {
	if code == nil {
		return 0
	}
	if len(code) != words {
		panic("kernels: FastScanPackBlock code of the wrong length")
	}
	return code[w]
}

// FastScanLUT writes into lut (16·len(q)/4 bytes) the tables of the query
// bytes q for FastScan32: lut[16g + m] = Σ q[4g + t] over the bits t of m.
// Every entry must fit a byte, so q's values must be at most 63 (four of
// them add up to at most 252). It panics if len(q) is not a positive
// multiple of 8, lut is too short, or a value of q exceeds 63.
//
// It runs once per query (rabitq.Query.Prepare), so it works on eight
// bytes at a time: no sum exceeds 252, so adding a byte to every byte of a
// word never carries into the next, and a table is built by doubling,
// [0, a] -> [0, a, b, a+b] -> ... -> its 16 entries, in two words.
func FastScanLUT(q []uint8, lut []uint8) {
	if len(q) == 0 || len(q)%8 != 0 {
		panic("kernels: FastScanLUT query length is not a positive multiple of 8")
	}
	var high uint64 // the bits above 63 of every byte of q
	for i := 0; i < len(q); i += 8 {
		high |= binary.LittleEndian.Uint64(q[i:])
	}
	if high&0xc0c0c0c0c0c0c0c0 != 0 {
		panic("kernels: FastScanLUT query value above 63")
	}
	lut = lut[:4*len(q)]
	for g := 0; g < len(q)/4; g++ {
		a, b, c, d := uint64(q[4*g]), uint64(q[4*g+1]), uint64(q[4*g+2]), uint64(q[4*g+3])
		t := a << 8                   // entries 0, 1
		t |= (t + b*0x0101) << 16     // 2, 3: entries 0, 1 plus b
		t |= (t + c*0x01010101) << 32 // 4 to 7: entries 0 to 3 plus c
		binary.LittleEndian.PutUint64(lut[16*g:], t)
		binary.LittleEndian.PutUint64(lut[16*g+8:], t+d*0x0101010101010101) // 8 to 15: plus d
	}
}
