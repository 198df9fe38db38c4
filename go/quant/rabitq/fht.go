package rabitq

// fhtUnscaled transforms x (length a power of two) in place by the
// Walsh-Hadamard matrix without its 1/sqrt(len(x)) normalisation, which
// the rotation applies once for all its rounds.
func fhtUnscaled(x []float32) {
	n := len(x)
	for h := 1; h < n; h <<= 1 {
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
