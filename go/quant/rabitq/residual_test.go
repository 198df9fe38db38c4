package rabitq

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
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
