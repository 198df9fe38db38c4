//go:build !amd64 || noasm

package kernels

func fwhtWide(x []float32)               { fwhtWideGeneric(x) }
func fwht8(x []float32)                  { fwht8Generic(x) }
func signedFWHT8(x, signs []float32)     { signedFWHT8Generic(x, signs) }
func mulFloats(x, y []float32)           { mulFloatsGeneric(x, y) }
func scaleFloats(x []float32, c float32) { scaleFloatsGeneric(x, c) }
func butterfly(a, b []float32)           { butterflyGeneric(a, b) }
