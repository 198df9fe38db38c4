package kernels

// FWHT transforms x in place by the unnormalised Walsh-Hadamard matrix of
// size len(x) (entries ±1; divide by sqrt(len(x)) for the orthonormal
// transform), the fast O(n log n) butterflies of RaBitQ's rotation. len(x)
// must be a power of two of at least 8; it panics otherwise. Every path does
// the same additions in the same order, so results are bit-identical.
func FWHT(x []float32) {
	n := len(x)
	if n < 8 || n&(n-1) != 0 {
		panic("kernels: FWHT length is not a power of two >= 8")
	}
	fwht8(x)
	if n > 8 {
		fwhtWide(x)
	}
}

// fwht8 runs the first three stages (butterfly spans 1, 2, 4) on each block
// of 8, in registers.
func fwht8(x []float32) {
	for i := 0; i+8 <= len(x); i += 8 {
		v := (*[8]float32)(x[i : i+8])
		a0, a1 := v[0]+v[1], v[0]-v[1]
		a2, a3 := v[2]+v[3], v[2]-v[3]
		a4, a5 := v[4]+v[5], v[4]-v[5]
		a6, a7 := v[6]+v[7], v[6]-v[7]
		b0, b2 := a0+a2, a0-a2
		b1, b3 := a1+a3, a1-a3
		b4, b6 := a4+a6, a4-a6
		b5, b7 := a5+a7, a5-a7
		v[0], v[4] = b0+b4, b0-b4
		v[1], v[5] = b1+b5, b1-b5
		v[2], v[6] = b2+b6, b2-b6
		v[3], v[7] = b3+b7, b3-b7
	}
}

// fwhtWideGeneric runs the stages of span 8 and up: the reference of the
// assembly.
func fwhtWideGeneric(x []float32) {
	n := len(x)
	for h := 8; h < n; h <<= 1 {
		for i := 0; i < n; i += 2 * h {
			a := x[i : i+h]
			b := x[i+h : i+2*h]
			b = b[:len(a)]
			for j := range a {
				u, v := a[j], b[j]
				a[j], b[j] = u+v, u-v
			}
		}
	}
}
