package kernels

// The exported kernels are one direct call each so that they inline into the
// callers' hot loops: on amd64 the callee is an assembly stub that branches
// on the path flags and jumps to the chosen body; elsewhere it is the
// generic loop. Reslicing b to len(a) is the one bounds check memory safety
// needs (the assembly reads exactly len(a) elements of each slice).

// Dot returns the dot product of a and b[:len(a)].
func Dot(a, b []float32) float32 { return dot(a, b[:len(a)]) }

// L2Squared returns the squared Euclidean distance between a and b[:len(a)].
func L2Squared(a, b []float32) float32 { return l2(a, b[:len(a)]) }

// L1 returns the Manhattan distance between a and b[:len(a)], the sum of
// |a[i]-b[i]|.
func L1(a, b []float32) float32 { return l1(a, b[:len(a)]) }

// DotRows sets out[i] = Dot(q, rows[ids[i]·len(q):]) for every i <
// len(ids), with the same bits as one Dot call per id. The AVX-512 path
// computes four rows per pass, loading each query chunk once and keeping
// four rows' loads in flight. It panics if a row lies outside rows or out
// is shorter than ids.
func DotRows(q, rows []float32, ids []uint32, out []float32) {
	checkRows(len(q), len(rows), ids, len(out))
	dotRows(q, rows, ids, out)
}

// L2SquaredRows is DotRows for L2Squared.
func L2SquaredRows(q, rows []float32, ids []uint32, out []float32) {
	checkRows(len(q), len(rows), ids, len(out))
	l2Rows(q, rows, ids, out)
}

// checkRows is the memory-safety check of the Rows kernels: the assembly
// trusts every id. It multiplies rather than divides (a division per call
// costs as much as checking a whole neighbour list).
func checkRows(dim, rowsLen int, ids []uint32, outLen int) {
	if outLen < len(ids) {
		panic("kernels: Rows output shorter than ids")
	}
	if dim == 0 || len(ids) == 0 {
		return // no row is read
	}
	if rowsLen < dim {
		panic("kernels: Rows id outside rows")
	}
	last := uint(rowsLen - dim) // start of the last whole row
	for _, id := range ids {
		if uint(id)*uint(dim) > last {
			panic("kernels: Rows id outside rows")
		}
	}
}

// DotU8 returns the sum of a[i]*b[i] over i < len(a), computed exactly modulo
// 2^32 (exact for len(a) <= 65536).
func DotU8(a, b []uint8) uint32 { return dotU8(a, b[:len(a)]) }

// L2U8 returns the sum of (a[i]-b[i])² over i < len(a), computed exactly
// modulo 2^32 (exact for len(a) <= 65536).
func L2U8(a, b []uint8) uint32 { return l2U8(a, b[:len(a)]) }

// Path names the code path the float32 kernels (Dot, L2Squared, L1) use:
// "avx512", "avx2" or "generic".
func Path() string { return floatPath().String() }

// PathU8 names the code path the SQ8 kernels (DotU8, L2U8) use: "avx512"
// (AVX-512 BW + VNNI), "avx2" or "generic". It can differ from Path on CPUs
// with AVX-512F but no VNNI.
func PathU8() string { return u8Path().String() }

// path is a kernel implementation level; a higher level is faster and needs
// more CPU features.
type path uint8

const (
	pathGeneric path = iota
	pathAVX2
	pathAVX512
)

func (p path) String() string {
	switch p {
	case pathAVX2:
		return "avx2"
	case pathAVX512:
		return "avx512"
	default:
		return "generic"
	}
}
