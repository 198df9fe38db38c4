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
