//go:build !linux

package hnsw

// scratchFloats returns n zeroed float32s from the heap where anonymous
// mappings are not used (scratch_linux.go says why Linux maps them).
func scratchFloats(n int) (s []float32, release func()) {
	return make([]float32, n), func() {}
}
