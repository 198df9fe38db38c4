package kernels

import "math"

// MinMax returns the smallest and the largest value of x (+Inf and -Inf
// when x is empty), ignoring NaNs. A zero result is always +0, whatever
// the signs of the zeros in x, so that every path returns the same bits
// (the assembly's lanes meet the values in another order than the loop).
func MinMax(x []float32) (lo, hi float32) {
	lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
	n := len(x) &^ 15
	if n > 0 && minMaxWide(x[:n], &lo, &hi) {
		x = x[n:]
	}
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo + 0, hi + 0 // -0 + 0 = +0; every other value unchanged
}

// Quantize sets code[i] = clamp(int((x[i]-lo)·inv + 0.5), 0, top) for
// every i of x, each step rounded to float32 as written (no fused
// multiply-add), and returns the sum of the codes: a query's scalar
// quantization to the grid lo + uᵢ/inv. top must be in [0, 255]; it
// panics if code is shorter than x or top is outside that range.
func Quantize(x []float32, lo, inv float32, top int, code []uint8) int {
	if top < 0 || top > 255 {
		panic("kernels: Quantize top outside [0, 255]")
	}
	code = code[:len(x)]
	n := len(x) &^ 15
	total := 0
	if n > 0 {
		var ok bool
		if total, ok = quantizeWide(x[:n], lo, inv, top, code[:n]); !ok {
			n = 0
		}
	}
	return total + quantizeGeneric(x[n:], lo, inv, top, code[n:])
}

// quantizeGeneric is Quantize's reference loop.
func quantizeGeneric(x []float32, lo, inv float32, top int, code []uint8) int {
	code = code[:len(x)]
	total := 0
	for i, v := range x {
		u := int((v-lo)*inv + 0.5)
		u = min(max(u, 0), top)
		code[i] = uint8(u)
		total += u
	}
	return total
}
