//go:build amd64 && !noasm

package kernels

import "unsafe"

// PrefetchRows asks the CPU to start loading rows of a row-major matrix
// into cache: for each i in rows, the first lines 64-byte cache lines
// of row i (row i starts at base + i*stride bytes). It reads nothing and
// cannot fault: prefetching an unmapped address is a no-op, but callers
// should pass rows inside the matrix anyway.
//
// The graph search calls it on a node's unvisited neighbours before
// computing their distances, so the loads overlap instead of each distance
// stalling on memory in turn (hnswlib does the same with _mm_prefetch).
//
//go:noescape
func PrefetchRows(base unsafe.Pointer, stride uintptr, rows []uint32, lines int)
