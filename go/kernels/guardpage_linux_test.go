package kernels

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// endAtGuardPage maps two pages, makes the second inaccessible and returns
// the first, so a slice ending at its last byte faults on any read past it.
func endAtGuardPage(t *testing.T) []byte {
	t.Helper()
	page := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { _ = unix.Munmap(mem) })
	if err := unix.Mprotect(mem[page:], unix.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	return mem[:page:page]
}

// TestKernelsNeverReadPastEnd prevents over-reads that guard values cannot
// see (a read whose lanes are later discarded): every slice ends at a page
// followed by an inaccessible page, so such a read crashes the test binary.
func TestKernelsNeverReadPastEnd(t *testing.T) {
	pageA, pageB := endAtGuardPage(t), endAtGuardPage(t)
	const maxDim = 1024 // 4 KiB of float32: fits the smallest page
	forEachPath(t, func(t *testing.T) {
		for d := 0; d <= maxDim && 4*d <= len(pageA); d++ {
			a := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(pageA[len(pageA)-4*d:]))), d)
			b := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(pageB[len(pageB)-4*d:]))), d)
			_ = Dot(a, b)
			_ = L2Squared(a, b)
		}
		for d := 0; d <= len(pageA); d++ {
			a, b := pageA[len(pageA)-d:], pageB[len(pageB)-d:]
			_ = DotU8(a, b)
			_ = L2U8(a, b)
		}
	})
}
