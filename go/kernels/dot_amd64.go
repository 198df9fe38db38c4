//go:build amd64 && !noasm

//lint:file-ignore U1000 the path bodies are called only from the dispatch stubs in dot_amd64.s

package kernels

// Float32 kernels in dot_amd64.s. Every function reads exactly len(a)
// elements of a and of b; callers guarantee len(b) >= len(a).

// dot jumps to dotAVX512, dotAVX2 or dotGeneric according to useAVX512 and
// useAVX2. It is assembly so that Dot inlines into callers as a single call.
//
//go:noescape
func dot(a, b []float32) float32

// l2 jumps to l2AVX512, l2AVX2 or l2Generic like dot.
//
//go:noescape
func l2(a, b []float32) float32

// l1 jumps to l1AVX512, l1AVX2 or l1Generic like dot.
//
//go:noescape
func l1(a, b []float32) float32

// dotAVX2 computes, with four 8-lane FMA accumulators and a VMASKMOVPS tail,
//
//	for i := range a {
//		sum += a[i] * b[i]
//	}
//	return sum
//
//go:noescape
func dotAVX2(a, b []float32) float32

// l2AVX2 computes, with four 8-lane FMA accumulators and a VMASKMOVPS tail,
//
//	for i := range a {
//		d := a[i] - b[i]
//		sum += d * d
//	}
//	return sum
//
//go:noescape
func l2AVX2(a, b []float32) float32

// dotAVX512 computes, with four 16-lane FMA accumulators and a K-masked tail,
//
//	for i := range a {
//		sum += a[i] * b[i]
//	}
//	return sum
//
//go:noescape
func dotAVX512(a, b []float32) float32

// l2AVX512 computes, with four 16-lane FMA accumulators and a K-masked tail,
//
//	for i := range a {
//		d := a[i] - b[i]
//		sum += d * d
//	}
//	return sum
//
//go:noescape
func l2AVX512(a, b []float32) float32

// l1AVX2 computes, with four 8-lane accumulators, the sign bit cleared by
// VANDPS and a VMASKMOVPS tail,
//
//	for i := range a {
//		sum += abs(a[i] - b[i])
//	}
//	return sum
//
//go:noescape
func l1AVX2(a, b []float32) float32

// l1AVX512 computes, with four 16-lane accumulators, the sign bit cleared
// by VPANDD and a K-masked tail,
//
//	for i := range a {
//		sum += abs(a[i] - b[i])
//	}
//	return sum
//
//go:noescape
func l1AVX512(a, b []float32) float32
