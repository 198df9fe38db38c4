//go:build linux

package hnsw

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// scratchFloats returns n zeroed float32s outside the Go heap and the
// function that gives them back to the kernel; below 1 MiB, or if the
// mapping fails, they come from the heap and release does nothing.
//
// It is for large buffers a build uses once: qgRows.fill's rotated copy
// of every vector (n·D·4 bytes: 205 MB on pypi-use512 100k, 245 MB on
// fashion-mnist 60k at D = 1,024). From the heap, that memory was freed
// but stayed in the process as the collector's headroom after every
// build and load of a qg index: bench_memory.py measured 213 and 247 MiB
// of resident memory beyond what Memory() counts
// (memory-20261203T135349Z-f3f5755-pypi-use512-angular.json). Unmapped,
// it leaves at once.
func scratchFloats(n int) (s []float32, release func()) {
	size := 4 * n
	if size < 1<<20 {
		return make([]float32, n), func() {}
	}
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]float32, n), func() {}
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n), func() { _ = unix.Munmap(b) }
}
