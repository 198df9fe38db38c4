//go:build linux

package hnsw

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePageSize is the transparent huge page size on x86-64 and arm64.
const hugePageSize = 2 << 20

// adviseHugePages asks the kernel to back s with transparent huge pages.
// A search touches rows scattered over hundreds of MiB; with 4 KiB pages
// nearly every row costs a TLB miss on top of the cache miss (and the graph
// keeps vectors, links and flags in separate arrays, so a visited node can
// cost several). With 2 MiB pages the page walks mostly disappear. It is
// advice: on kernels with THP disabled it does nothing, and errors are
// ignored. Only the part of s that covers whole huge pages is advised, and
// only arrays of several huge pages are worth it.
func adviseHugePages[T any](s []T) {
	if len(s) == 0 {
		return
	}
	size := uintptr(len(s)) * unsafe.Sizeof(s[0])
	if size < 4*hugePageSize {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	first := (start + hugePageSize - 1) &^ (hugePageSize - 1)
	last := (start + size) &^ (hugePageSize - 1)
	if last <= first {
		return
	}
	region := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), first-start)), last-first)
	_ = unix.Madvise(region, unix.MADV_HUGEPAGE)
}
