// Package kernels holds the distance kernels every index calls on its hot
// path: float32 dot product and squared Euclidean distance.
//
// Each kernel has a pure-Go reference (kernels_generic.go) and, on amd64,
// Go assembly for AVX2+FMA and AVX-512. The path is chosen once at start-up
// with cpuid; building with the `noasm` tag forces the pure-Go path. All
// paths agree with a float64 reference within the tolerance stated in
// kernels_test.go.
//
// Kernels never allocate and never check lengths beyond what memory safety
// needs: callers pass slices of equal length (len(b) >= len(a)).
package kernels
