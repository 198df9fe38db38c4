package rabitq

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/kernels"
)

// TestEncodeResidualIsEncodeAboutTheVector: coding o relative to u is
// coding it with u as the one centroid (same bits; the factors equal up to
// the float32 sums of the kernels), for both metrics.
func TestEncodeResidualIsEncodeAboutTheVector(t *testing.T) {
	const dim = 200
	rng := rand.New(rand.NewPCG(7, 8))
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for _, m := range []Metric{L2, InnerProduct} {
		for trial := 0; trial < 20; trial++ {
			u, o := vec(), vec()
			byCentroid, err := New(dim, m, 1, 5, u)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]uint64, byCentroid.Words())
			wf, _ := byCentroid.NewEncoder().Encode(o, want, nil)

			q, _ := New(dim, m, 1, 5, nil)
			ro, ru := make([]float32, q.Padded()), make([]float32, q.Padded())
			q.Rotate(o, ro)
			q.Rotate(u, ru)
			got := make([]uint64, q.Words())
			gf := q.NewEncoder().EncodeResidual(ro, ru, got)
			if !slices.Equal(got, want) {
				t.Fatalf("metric %d trial %d: codes differ", m, trial)
			}
			for name, pair := range map[string][2]float32{"add": {gf.Add, wf.Add}, "rescale": {gf.Rescale, wf.Rescale},
				"err": {gf.Err, wf.Err}, "sum": {gf.Sum, wf.Sum}, "qerr": {gf.QErr, wf.QErr}} {
				if d := math.Abs(float64(pair[0] - pair[1])); d > 1e-4*math.Max(1, math.Abs(float64(pair[1]))) {
					t.Errorf("metric %d trial %d: %s %g, want %g", m, trial, name, pair[0], pair[1])
				}
			}
		}
	}
}

// TestPrepareFastFromMatchesPrepare: the query PrepareFastFrom makes gives
// EstimateFastFrom the same operand (LUT and terms, bit for bit) as
// Prepare's, and Prepare's one-pass quantization of both operands gives
// the same 8-bit operand as a query without FastScan, so neither shortcut
// changes an estimate.
func TestPrepareFastFromMatchesPrepare(t *testing.T) {
	const dim = 300
	rng := rand.New(rand.NewPCG(9, 10))
	sample := make([]float32, 400*dim)
	for i := range sample {
		sample[i] = float32(rng.NormFloat64())
	}
	for _, m := range []Metric{L2, InnerProduct} {
		q, err := NewClustered(dim, m, 1, 3, sample, 4)
		if err != nil {
			t.Fatal(err)
		}
		full, fast, plain := q.NewQuery(), q.NewQuery(), q.NewQuery()
		full.EnableFastScan()
		fast.EnableFastScan()
		for trial := 0; trial < 50; trial++ {
			v := sample[trial*dim : (trial+1)*dim]
			if trial == 0 {
				v = make([]float32, dim) // every rotated value equal: the grid step is 0
			}
			full.Prepare(v)
			fast.PrepareFastFrom(v)
			plain.Prepare(v)
			if !slices.Equal(full.LUT, fast.LUT) || !slices.Equal(full.code6, fast.code6) {
				t.Fatalf("metric %d trial %d: PrepareFastFrom's LUT differs from Prepare's", m, trial)
			}
			if full.lo != fast.lo || full.delta6 != fast.delta6 || full.sum6 != fast.sum6 || full.qerr6 != fast.qerr6 {
				t.Fatalf("metric %d trial %d: PrepareFastFrom's terms differ from Prepare's", m, trial)
			}
			if !slices.Equal(full.Code, plain.Code) || full.lo != plain.lo || full.delta != plain.delta ||
				full.sum != plain.sum || !slices.Equal(full.add, plain.add) || !slices.Equal(full.norm, plain.norm) {
				t.Fatalf("metric %d trial %d: Prepare with FastScan changed the 8-bit operand", m, trial)
			}
			for s := uint32(0); s < 2000; s += 97 {
				d1, b1 := full.EstimateFastFrom(s, 0.5, -1.25, 0.1, 40, 2.5, 1.5)
				d2, b2 := fast.EstimateFastFrom(s, 0.5, -1.25, 0.1, 40, 2.5, 1.5)
				if d1 != d2 || b1 != b2 {
					t.Fatalf("metric %d trial %d: EstimateFastFrom(%d) differs", m, trial, s)
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("PrepareFastFrom without EnableFastScan did not panic")
		}
	}()
	q, _ := New(dim, L2, 1, 3, nil)
	q.NewQuery().PrepareFastFrom(sample[:dim])
}

// referenceEncodeResidual is EncodeResidual as it was first written, one
// dimension at a time into the code's words: the codes and factors of
// every quantized graph built since, which the faster loop must keep.
func referenceEncodeResidual(e *Encoder, ro, ru []float32, bits []uint64) Factors {
	q := e.q
	D := q.Padded()
	r, sign := e.buf[:D], e.abs[:D]
	bits = bits[:D/64]
	clear(bits)
	pop := 0
	for i := range r {
		x := ro[i] - ru[i]
		r[i] = x
		var b uint32
		if x > 0 {
			b = 1
		}
		bits[i>>6] |= uint64(b) << (i & 63)
		pop += int(b)
		sign[i] = math.Float32frombits(0x3f000000 | (b^1)<<31)
	}
	norm2 := float64(kernels.L2Squared(ro[:D], ru[:D]))
	add := norm2
	if q.metric == InnerProduct {
		add = -float64(kernels.Dot(r, ru[:D]))
	}
	ipx := float64(kernels.Dot(sign, r))
	f := q.factors(add, norm2, ipx, float64(D)/4, float64(kernels.Dot(sign, ru[:D])))
	f.Sum = float32(pop)
	return f
}

// TestEncodeResidualKeepsItsCodes prevents a faster EncodeResidual from
// changing the codes of quantized graphs (rows are recomputed when an
// index loads, so a changed code changes what a saved index answers):
// against referenceEncodeResidual, the same bits and the same factor bits
// at every padded dimension kind (powers of two, FHT-Kac multiples of 64),
// for both metrics, including residuals with zero and negative-zero
// coordinates (coded 0, as x > 0 is false) and a zero residual.
func TestEncodeResidualKeepsItsCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, dim := range []int{1, 63, 64, 150, 192, 512, 784, 1000} {
		for _, padded := range []int{PaddedDim(dim), LegacyPaddedDim(dim)} {
			for _, m := range []Metric{L2, InnerProduct} {
				q, err := NewWithCentroidsPadded(dim, padded, m, 1, 5, make([]float32, dim))
				if err != nil {
					t.Fatal(err)
				}
				e := q.NewEncoder()
				for trial := range 12 {
					ro, ru := make([]float32, padded), make([]float32, padded)
					for i := range ro {
						ro[i], ru[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
						switch {
						case trial == 0: // the vector itself
							ro[i] = ru[i]
						case trial%3 == 1 && i%5 == 0: // ties: x = +0
							ro[i] = ru[i]
						case trial%3 == 2 && i%7 == 0: // x = −0 − 0 = −0
							ro[i], ru[i] = float32(math.Copysign(0, -1)), 0
						}
					}
					got, want := make([]uint64, q.Words()), make([]uint64, q.Words())
					for i := range got {
						got[i] = ^uint64(0) // EncodeResidual must overwrite every word
					}
					gf, wf := e.EncodeResidual(ro, ru, got), referenceEncodeResidual(e, ro, ru, want)
					if !slices.Equal(got, want) || factorBits(gf) != factorBits(wf) {
						t.Fatalf("dim %d padded %d metric %d trial %d: %x %+v, reference %x %+v", dim, padded, m, trial, got, gf, want, wf)
					}
				}
			}
		}
	}
}

func factorBits(f Factors) [6]uint32 {
	return [6]uint32{math.Float32bits(f.Add), math.Float32bits(f.Rescale), math.Float32bits(f.Err),
		math.Float32bits(f.Sum), math.Float32bits(f.QErr), f.Cluster}
}

// TestEncodeRotatedIsEncode: coding a vector from its rotation gives the
// codes and factors of coding the vector, bit for bit (a quantized graph's
// build codes its rows so), with one centroid or several and with extended
// codes; and SameRotation tells which quantizers share P.
func TestEncodeRotatedIsEncode(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, dim := range []int{100, 256, 784} {
		sample := make([]float32, 300*dim)
		for i := range sample {
			sample[i] = float32(rng.NormFloat64())
		}
		for _, m := range []Metric{L2, InnerProduct} {
			for _, bits := range []int{1, 4} {
				for _, clusters := range []int{1, 5} {
					q, err := NewClustered(dim, m, bits, 9, sample, clusters)
					if err != nil {
						t.Fatal(err)
					}
					e, rv := q.NewEncoder(), make([]float32, q.Padded())
					for i := range 20 {
						v := sample[i*dim : (i+1)*dim]
						want, got := make([]uint64, q.Words()), make([]uint64, q.Words())
						wantEx, gotEx := make([]uint8, q.Padded()), make([]uint8, q.Padded())
						w1, wx := e.Encode(v, want, wantEx)
						q.Rotate(v, rv)
						g1, gx := e.EncodeRotated(rv, got, gotEx)
						if !slices.Equal(got, want) || !slices.Equal(gotEx, wantEx) || factorBits(g1) != factorBits(w1) || factorBits(gx) != factorBits(wx) {
							t.Fatalf("dim %d metric %d bits %d clusters %d row %d: EncodeRotated differs from Encode", dim, m, bits, clusters, i)
						}
					}
					same, _ := NewWithCentroidsPadded(dim, q.Padded(), m, 1, 9, make([]float32, dim))
					otherSeed, _ := NewWithCentroidsPadded(dim, q.Padded(), m, 1, 10, make([]float32, dim))
					if !q.SameRotation(same) || q.SameRotation(otherSeed) {
						t.Fatalf("dim %d: SameRotation %v for the same seed, %v for another", dim, q.SameRotation(same), q.SameRotation(otherSeed))
					}
					if legacy := LegacyPaddedDim(dim); legacy != q.Padded() {
						other, _ := NewWithCentroidsPadded(dim, legacy, m, 1, 9, make([]float32, dim))
						if q.SameRotation(other) {
							t.Fatalf("dim %d: SameRotation true for padded %d and %d", dim, q.Padded(), legacy)
						}
					}
				}
			}
		}
	}
}
