//go:build !linux

package kernels

// threadCPUSeconds has no per-thread clock off Linux: the cpu-ns/op metric
// reads 0 there.
func threadCPUSeconds() float64 { return 0 }
