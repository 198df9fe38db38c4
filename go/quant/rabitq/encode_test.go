package rabitq

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// referenceEncode1 is encode1 as first written, a branch per dimension
// and each bit or-ed into its word in place: the 1-bit codes and factors
// of every index coded since, which the branch-free loop must keep.
func referenceEncode1(q *Quantizer, r, rc []float32, bits []uint64, add, norm2 float64) Factors {
	D := len(r)
	bits = bits[:D/64]
	clear(bits)
	var absSum, ipxc float64
	pop := 0
	for i, x := range r {
		if x > 0 {
			bits[i>>6] |= 1 << (i & 63)
			pop++
			ipxc += 0.5 * float64(rc[i])
		} else {
			ipxc -= 0.5 * float64(rc[i])
		}
		absSum += math.Abs(float64(x))
	}
	f := q.factors(add, norm2, absSum/2, float64(D)/4, ipxc)
	f.Sum = float32(pop)
	return f
}

// TestEncode1KeepsItsCodes: encode1 gives referenceEncode1's code and
// factors bit for bit, at padded dimensions of both rotation kinds,
// with zero and negative-zero residual coordinates among random ones.
func TestEncode1KeepsItsCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, dim := range []int{10, 64, 150, 512, 784} {
		for _, m := range []Metric{L2, InnerProduct} {
			q, err := New(dim, m, 1, 3, nil)
			if err != nil {
				t.Fatal(err)
			}
			D := q.Padded()
			for trial := range 10 {
				r, rc := make([]float32, D), make([]float32, D)
				for i := range r {
					r[i], rc[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()*3)
					switch {
					case trial == 0 || trial%3 == 1 && i%4 == 0:
						r[i] = 0
					case trial%3 == 2 && i%6 == 0:
						r[i] = float32(math.Copysign(0, -1))
					}
				}
				got, want := make([]uint64, D/64), make([]uint64, D/64)
				for i := range got {
					got[i] = ^uint64(0) // encode1 must overwrite every word
				}
				gf, wf := q.encode1(r, rc, got, 1.5, 2.5), referenceEncode1(q, r, rc, want, 1.5, 2.5)
				if !slices.Equal(got, want) || factorBits(gf) != factorBits(wf) {
					t.Fatalf("dim %d metric %d trial %d: %x %+v, reference %x %+v", dim, m, trial, got, gf, want, wf)
				}
			}
		}
	}
}
