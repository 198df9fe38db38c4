// Package kernels holds the distance kernels every index calls on its hot
// path: float32 dot product and squared Euclidean distance (Dot, L2Squared)
// and their exact 8-bit counterparts for scalar-quantised vectors (DotU8,
// L2U8).
//
// # Contract
//
// Every kernel reads a and b[:len(a)]; b may be longer and its extra
// elements are ignored. Slicing b[:len(a)] is the only check: if it is out
// of range the kernel panics before reading anything. Kernels never
// allocate, never retain their arguments and are safe for concurrent use.
//
// # Paths
//
//	path      float32 kernels                   SQ8 kernels
//	avx512    AVX-512F: 4×16-lane FMA           AVX-512 BW+VNNI: VPDPBUSD,
//	          accumulators, K-masked tail       64 bytes a step, K-masked tail
//	avx2      AVX2+FMA: 4×8-lane FMA            AVX2: VPMADDWD on even/odd
//	          accumulators, VMASKMOVPS tail     bytes, scalar tail (< 16 bytes)
//	generic   pure Go, 4 scalar accumulators    pure Go, 4 accumulators
//
// No path reads memory outside the two slices: tails use masked loads
// (which neither read nor fault on disabled lanes) or scalar code.
//
// # Dispatch
//
// The best path is chosen once, at package initialisation, from
// github.com/klauspost/cpuid (which also checks that the OS saves the
// AVX/AVX-512 register state). Path and PathU8 report the choice; they can
// differ on CPUs with AVX-512F but without VNNI. Each exported kernel is a
// one-line function that inlines into the caller as a direct call to a small
// assembly stub, which tests the path flags and tail-jumps to the chosen body
// (or to the pure-Go loop): no function values, interfaces or per-call
// feature checks in Go. Building with the `noasm` tag, or for an
// architecture other than amd64, compiles the pure-Go loops alone.
//
// # Results
//
// The float32 paths add in different orders (and the assembly paths fuse
// multiply and add), so they agree only within rounding: for d elements
// whose terms have absolute sum S, every path is within
// (ceil(d/4)+10)·2⁻²⁴·S of the exact result (see f32Tolerance in
// kernels_test.go for the derivation); inputs whose products and partial sums
// are integers below 2²⁴ give bit-identical results on all paths.
//
// The SQ8 kernels compute in integers modulo 2³², bit-identical on every path
// and exact whenever the true sum fits, which is always the case for
// len(a) <= 65536 (65536·255² < 2³²). The AVX-512 path needs the u8×u8
// product but VPDPBUSD multiplies unsigned by signed bytes, so it uses
// Σx·y = Σx·(y−128) + 128·Σx, where y−128 is y XOR 0x80 read as a signed
// byte.
//
// # Multi-row kernels
//
// DotRows and L2SquaredRows compute one query's distances to a list of rows
// of a matrix (rows[id·len(q):], one id per neighbour being measured) in
// one call. On the avx512 path four rows advance together
// (rows_amd64.s): each query chunk is loaded
// once per group, sixteen accumulators keep the FMA units busy, and four
// rows' loads are in flight at once; each row still gets exactly the
// instructions of the one-row kernel, so results are bit-identical to one
// Dot/L2Squared call per row. The other paths loop over the one-row kernel.
// The wrapper checks every id against len(rows) before the assembly runs.
//
// # RaBitQ 1-bit codes
//
// BitDotU8Rows sums, per code, the query bytes of its set bits (one code at
// a time, scattered rows). FastScan32 does the same for a block of 32 codes
// packed together (fastscan.go: 4-bit groups, transposed for VPSHUFB table
// lookups) against a table of each group's 16 partial sums, so a graph node's
// 32 neighbours cost one contiguous read of 4·D bytes; its tables hold bytes,
// so the query must be quantised to 6 bits. Both compute exact integers and
// are bit-identical on every path; both use the AVX2 flag BitDotPath names.
//
// # A RaBitQ query's preparation
//
// FWHT and SignedFWHT (the sign flips of a round fused into the pass of
// the first three stages), Mul, Scale and Butterfly (the Kac step) make up
// the rotations of package rabitq; MinMax and Quantize the query's scalar
// quantization. They run once per query, in AVX2 assembly (MinMax and
// Quantize have AVX-512 bodies too, not dispatched until they have been
// tested on a machine with AVX-512: quantize_amd64.go), and every path does the same IEEE operations as the Go
// loops (no fused multiply-add), so results are bit-identical; a zero
// returned by MinMax is always +0.
//
// # Prefetch
//
// PrefetchRows issues PREFETCHT0 for the first cache lines of a list of
// rows of a matrix: the graph search calls it on a node's unvisited
// neighbours before computing their distances so the memory loads overlap.
// It reads nothing architecturally and cannot fault; without assembly it is
// a no-op.
//
// # Generated assembly
//
// Every *_amd64.s file is written by gen_amd64.py (go generate ./go/kernels);
// edit the generator, never the output. One generator writes the one-row
// and the four-row AVX-512 kernels from the same chunk, tail and reduction
// code, which is what keeps their results bit-identical. make go-check
// regenerates into a temporary directory and fails if a committed file
// differs.
package kernels

//go:generate python3 gen_amd64.py
