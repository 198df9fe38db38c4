//go:build !amd64 || noasm

package kernels

func fwhtWide(x []float32) { fwhtWideGeneric(x) }
