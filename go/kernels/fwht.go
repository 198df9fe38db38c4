package kernels

// FWHT transforms x in place by the unnormalised Walsh-Hadamard matrix of
// size len(x) (entries ±1; divide by sqrt(len(x)) for the orthonormal
// transform), the fast O(n log n) butterflies of RaBitQ's rotation. len(x)
// must be a power of two of at least 8; it panics otherwise. Every path does
// the same additions in the same order, so results are bit-identical.
func FWHT(x []float32) {
	checkFWHT(len(x))
	fwht8(x)
	if len(x) > 8 {
		fwhtWide(x)
	}
}

// SignedFWHT is x[i] *= signs[i] for every i of x, then FWHT(x): one round
// of a randomised Hadamard rotation, the sign flips done in the pass of
// the first three stages. It panics as FWHT does, or if signs is shorter
// than x. The results are those of the two steps apart, bit for bit.
func SignedFWHT(x, signs []float32) {
	checkFWHT(len(x))
	signedFWHT8(x, signs[:len(x)])
	if len(x) > 8 {
		fwhtWide(x)
	}
}

func checkFWHT(n int) {
	if n < 8 || n&(n-1) != 0 {
		panic("kernels: FWHT length is not a power of two >= 8")
	}
}

// Mul sets x[i] *= y[i] for every i of x; it panics if y is shorter.
func Mul(x, y []float32) {
	y = y[:len(x)]
	n := len(x) &^ 7
	mulFloats(x[:n], y[:n])
	mulFloatsGeneric(x[n:], y[n:])
}

// Scale sets x[i] *= c for every i of x.
func Scale(x []float32, c float32) {
	n := len(x) &^ 7
	scaleFloats(x[:n], c)
	scaleFloatsGeneric(x[n:], c)
}

// Butterfly sets a[i], b[i] = a[i]+b[i], a[i]-b[i] for every i of a (one
// FWHT stage across two halves; the Kac step of RaBitQ-Library's FHT-Kac
// rotation); it panics if b is shorter than a.
func Butterfly(a, b []float32) {
	b = b[:len(a)]
	n := len(a) &^ 7
	butterfly(a[:n], b[:n])
	butterflyGeneric(a[n:], b[n:])
}

func mulFloatsGeneric(x, y []float32) {
	y = y[:len(x)]
	for i := range x {
		x[i] *= y[i]
	}
}

func scaleFloatsGeneric(x []float32, c float32) {
	for i := range x {
		x[i] *= c
	}
}

func butterflyGeneric(a, b []float32) {
	b = b[:len(a)]
	for i := range a {
		u, v := a[i], b[i]
		a[i], b[i] = u+v, u-v
	}
}

// signedFWHT8Generic is the reference of signedFWHT8: the sign flips, then
// fwht8Generic.
func signedFWHT8Generic(x, signs []float32) {
	mulFloatsGeneric(x, signs)
	fwht8Generic(x)
}

// fwht8Generic runs the first three stages (butterfly spans 1, 2, 4) on
// each block of 8, in registers: the reference of fwht8.
func fwht8Generic(x []float32) {
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
