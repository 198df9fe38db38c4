package kernels

import (
	"testing"
	"unsafe"
)

// TestPrefetchRowsReadsNothing calls PrefetchRows over rows at the very end
// of a buffer and with zero rows or lines: prefetching never faults and
// never changes memory, so the test checks only that it returns and leaves
// the data intact.
func TestPrefetchRowsReadsNothing(t *testing.T) {
	const dim, rows = 96, 8
	data := make([]float32, dim*rows)
	for i := range data {
		data[i] = float32(i)
	}
	base := unsafe.Pointer(unsafe.SliceData(data))
	PrefetchRows(base, dim*4, []uint32{0, 7, 3, 7}, 8)
	PrefetchRows(base, dim*4, nil, 8)
	PrefetchRows(base, dim*4, []uint32{1}, 0)
	for i := range data {
		if data[i] != float32(i) {
			t.Fatalf("data[%d] changed to %v", i, data[i])
		}
	}
}
