//go:build amd64 && !noasm

//lint:file-ignore U1000 the path bodies are called only from the dispatch stubs in u8_amd64.s

package kernels

// SQ8 kernels in u8_amd64.s. Every function reads exactly len(a) bytes of a
// and of b; callers guarantee len(b) >= len(a). All arithmetic is modulo 2^32
// and bit-identical to the generic loops.

// dotU8 jumps to dotU8AVX512, dotU8AVX2 or dotU8Generic according to
// useU8AVX512 and useU8AVX2.
//
//go:noescape
func dotU8(a, b []uint8) uint32

// l2U8 jumps to l2U8AVX512, l2U8AVX2 or l2U8Generic like dotU8.
//
//go:noescape
func l2U8(a, b []uint8) uint32

// dotU8AVX2 computes
//
//	for i := range a {
//		sum += uint32(a[i]) * uint32(b[i])
//	}
//	return sum
//
// Even and odd bytes are split into 16-bit lanes (mask, shift) and multiplied
// with VPMADDWD; the last len(a)%16 bytes are done one at a time.
//
//go:noescape
func dotU8AVX2(a, b []uint8) uint32

// l2U8AVX2 computes
//
//	for i := range a {
//		d := int32(a[i]) - int32(b[i])
//		sum += uint32(d * d)
//	}
//	return sum
//
// |a-b| is formed in bytes (max - min), then squared like dotU8AVX2.
//
//go:noescape
func l2U8AVX2(a, b []uint8) uint32

// dotU8AVX512 computes the same sum as dotU8AVX2. VPDPBUSD multiplies
// unsigned by signed bytes, so b is biased to the signed byte b-128
// (b XOR 0x80) and the bias added back: Σa·b = Σa·(b-128) + 128·Σa, with Σa
// from VPDPBUSD against ones. The tail is a K-masked load.
//
//go:noescape
func dotU8AVX512(a, b []uint8) uint32

// l2U8AVX512 computes the same sum as l2U8AVX2: |a-b| in bytes, then
// Σd² = Σd·(d-128) + 128·Σd with VPDPBUSD as in dotU8AVX512.
//
//go:noescape
func l2U8AVX512(a, b []uint8) uint32
