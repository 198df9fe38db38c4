package rabitq

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/kernels"
)

// exactDist is the distance the quantizer estimates, in float64.
func exactDist(m Metric, a, b []float32) float64 {
	var s float64
	for i := range a {
		if m == L2 {
			d := float64(a[i]) - float64(b[i])
			s += d * d
		} else {
			s += float64(a[i]) * float64(b[i])
		}
	}
	if m == InnerProduct {
		return 1 - s
	}
	return s
}

// coded is a data set encoded with one quantizer.
type coded struct {
	q      *Quantizer
	bits   []uint64
	ex     []uint8
	f1, fx []Factors
}

func encodeAll(t testing.TB, q *Quantizer, data []float32) *coded {
	dim, D, W := q.Dim(), q.Padded(), q.Words()
	n := len(data) / dim
	c := &coded{q: q, bits: make([]uint64, n*W), f1: make([]Factors, n), fx: make([]Factors, n)}
	if q.Bits() > 1 {
		c.ex = make([]uint8, n*D)
	}
	e := q.NewEncoder()
	for i := 0; i < n; i++ {
		var ex []uint8
		if c.ex != nil {
			ex = c.ex[i*D : (i+1)*D]
		}
		c.f1[i], c.fx[i] = e.Encode(data[i*dim:(i+1)*dim], c.bits[i*W:(i+1)*W], ex)
	}
	return c
}

// Estimators errorStats compares with the exact distance.
type estimator int

const (
	oneBit   estimator = iota // Estimate1: 8-bit query, kernels.BitDotU8Rows
	extended                  // EstimateEx: kernels.DotU8
	fastScan                  // EstimateFast: 6-bit query, blocks of 32 by kernels.FastScan32
)

// errorStats compares the estimates of kind ex of every
// (query, vector) pair with the exact distance: the fraction of pairs whose
// error exceeds the bound, the mean error relative to the mean bound (the
// estimator's bias) and the mean absolute error.
func errorStats(c *coded, data, queries []float32, ex estimator, eps float32) (violations, bias, meanAbs float64) {
	q := c.q
	dim, D, W := q.Dim(), q.Padded(), q.Words()
	n := len(data) / dim
	qq := q.NewQuery()
	qq.SetEpsilon(eps)
	var blocks []uint8 // the codes packed 32 to a block, for fastScan
	if ex == fastScan {
		qq.EnableFastScan()
		bb := kernels.FastScanBlockBytes(D)
		blocks = make([]uint8, (n+31)/32*bb)
		for i := 0; i < n; i++ {
			kernels.FastScanPack(blocks[i/32*bb:(i/32+1)*bb], i%32, c.bits[i*W:(i+1)*W])
		}
	}
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	sums := make([]uint32, n)
	var pairs, bad int
	var errSum, boundSum, absSum float64
	for qi := 0; qi < len(queries)/dim; qi++ {
		qv := queries[qi*dim : (qi+1)*dim]
		qq.Prepare(qv)
		switch ex {
		case oneBit:
			kernels.BitDotU8Rows(qq.Code, c.bits, q.Words(), ids, sums)
		case extended:
			for i := range sums {
				sums[i] = kernels.DotU8(c.ex[i*D:(i+1)*D], qq.Code)
			}
		case fastScan:
			bb := kernels.FastScanBlockBytes(D)
			var out [32]uint32
			for b := 0; b < (n+31)/32; b++ {
				kernels.FastScan32(qq.LUT, blocks[b*bb:(b+1)*bb], &out)
				copy(sums[32*b:], out[:])
			}
		}
		for i := 0; i < n; i++ {
			var est, bound float32
			switch ex {
			case oneBit:
				est, bound = qq.Estimate1(sums[i], c.f1[i])
			case extended:
				est, bound = qq.EstimateEx(sums[i], c.fx[i])
			case fastScan:
				f := c.f1[i]
				est, bound = qq.EstimateFast(sums[i], f.Add, f.Rescale, f.Err, f.Sum, f.Cluster)
			}
			e := float64(est) - exactDist(q.Metric(), data[i*dim:(i+1)*dim], qv)
			pairs++
			if math.Abs(e) > float64(bound) {
				bad++
			}
			errSum += e
			absSum += math.Abs(e)
			boundSum += float64(bound)
		}
	}
	return float64(bad) / float64(pairs), errSum / boundSum, absSum / float64(pairs)
}

func loadUse512(t *testing.T, n, nq int) (data, queries []float32) {
	t.Helper()
	set, err := synth.LoadRealSet("pypi-use512", n)
	if err != nil {
		t.Skipf("real data not available: %v", err)
	}
	return set.Train, set.Queries[:nq*set.Dim]
}

// The bound at ε₀ holds for about P(|Z| <= ε₀) of the pairs (Epsilon0):
// these are the allowed fractions outside it, with a margin for sampling.
var confidence = []struct {
	eps           float32
	maxViolations float64
}{{Epsilon0, 0.07}, {3, 0.005}}

// TestEstimateWithinBoundOnRealData prevents a wrong factor (rescale,
// error bound, query quantization) from going unnoticed: on held-out
// sentence embeddings the 1-bit estimate must fall within its bound for at
// the stated fraction of pairs (94.3% at ε₀ = 1.9, 99.7% at 3), for both
// metrics, and be unbiased (mean error a small fraction of the bound).
func TestEstimateWithinBoundOnRealData(t *testing.T) {
	racetest.AnswersOnly(t)
	data, queries := loadUse512(t, 3000, 30)
	for _, m := range []Metric{L2, InnerProduct} {
		q, err := New(512, m, 1, 7, data)
		if err != nil {
			t.Fatal(err)
		}
		c := encodeAll(t, q, data)
		for _, conf := range confidence {
			for _, kind := range []estimator{oneBit, fastScan} {
				v, bias, abs := errorStats(c, data, queries, kind, conf.eps)
				t.Logf("metric %d, estimator %d, eps %.1f: %.3f%% of pairs outside the bound, bias %.4f of the bound, mean |error| %.5f", m, kind, conf.eps, 100*v, bias, abs)
				if v > conf.maxViolations {
					t.Errorf("metric %d, estimator %d, eps %.1f: %.3f%% of pairs outside the bound, want <= %.1f%%", m, kind, conf.eps, 100*v, 100*conf.maxViolations)
				}
				if math.Abs(bias) > 0.05 {
					t.Errorf("metric %d, estimator %d: mean error is %.3f of the mean bound: the estimate is biased", m, kind, bias)
				}
			}
		}
	}
}

// TestEstimateWithinBoundOnSyntheticData is the same check on clustered
// Gaussian data of dimensions that need padding (100 -> 128, 300 -> 512)
// and a centroid far from the origin.
func TestEstimateWithinBoundOnSyntheticData(t *testing.T) {
	for _, dim := range []int{100, 300} {
		data := synth.Clustered(2000, dim, 20, 0.3, uint64(dim))
		for i := range data {
			data[i] += 3
		}
		queries := synth.Clustered(20, dim, 20, 0.3, uint64(dim)+1)
		for i := range queries {
			queries[i] += 3
		}
		q, err := New(dim, L2, 1, 1, data)
		if err != nil {
			t.Fatal(err)
		}
		c := encodeAll(t, q, data)
		for _, conf := range confidence {
			for _, kind := range []estimator{oneBit, fastScan} {
				v, bias, _ := errorStats(c, data, queries, kind, conf.eps)
				t.Logf("dim %d, estimator %d, eps %.1f: %.3f%% outside the bound, bias %.4f", dim, kind, conf.eps, 100*v, bias)
				if v > conf.maxViolations || math.Abs(bias) > 0.05 {
					t.Errorf("dim %d, estimator %d, eps %.1f: %.3f%% of pairs outside the bound (want <= %.1f%%), bias %.3f", dim, kind, conf.eps, 100*v, 100*conf.maxViolations, bias)
				}
			}
		}
	}
}

// TestExBitsConvergeToExact prevents an extended code that does not
// improve with its bits (a wrong scale search, sign or offset): the mean
// absolute error must shrink at every extra bit, by at least a quarter
// from 2 bits on, and at 8 bits be under 1% of the mean distance; the extended
// estimates must also stay within their own bound (at ε₀ = 3).
func TestExBitsConvergeToExact(t *testing.T) {
	racetest.AnswersOnly(t)
	data, queries := loadUse512(t, 1000, 10)
	var meanDist float64
	for i := 0; i < 100; i++ {
		meanDist += exactDist(L2, data[i*512:(i+1)*512], queries[:512]) / 100
	}
	prev := math.Inf(1)
	for bits := 1; bits <= MaxBits; bits++ {
		q, err := New(512, L2, bits, 3, data)
		if err != nil {
			t.Fatal(err)
		}
		c := encodeAll(t, q, data)
		kind := oneBit
		if bits > 1 {
			kind = extended
		}
		v, _, abs := errorStats(c, data, queries, kind, 3)
		t.Logf("%d bits: mean |error| %.6f (%.3f%% of the mean distance), %.3f%% outside the bound", bits, abs, 100*abs/meanDist, 100*v)
		if abs >= prev || (bits > 2 && abs > prev/1.3) {
			t.Errorf("%d bits: mean |error| %.6f, not enough below %.6f at %d bits", bits, abs, prev, bits-1)
		}
		if v > confidence[1].maxViolations {
			t.Errorf("%d bits: %.3f%% of pairs outside the bound", bits, 100*v)
		}
		prev = abs
	}
	if prev > 0.01*meanDist {
		t.Errorf("8 bits: mean |error| %.6f is over 1%% of the mean distance %.4f", prev, meanDist)
	}
}

// TestEncodingIsDeterministic prevents codes that change between runs or
// machines (map order, unseeded randomness): two quantizers built from the
// same seed and sample give identical codes and factors, and another seed
// gives another rotation.
func TestEncodingIsDeterministic(t *testing.T) {
	data := synth.Clustered(200, 70, 5, 0.5, 9)
	a := encodeAll(t, mustNew(t, 70, 4, 11, data), data)
	b := encodeAll(t, mustNew(t, 70, 4, 11, data), data)
	if !slices.Equal(a.bits, b.bits) || !slices.Equal(a.ex, b.ex) || !slices.Equal(a.f1, b.f1) || !slices.Equal(a.fx, b.fx) {
		t.Fatal("same seed and sample gave different codes")
	}
	c := encodeAll(t, mustNew(t, 70, 4, 12, data), data)
	if slices.Equal(a.bits, c.bits) {
		t.Fatal("another seed gave the same codes")
	}
	// A fixed value pins the rotation across Go versions and machines.
	r := NewRotation(3, 42)
	out := make([]float32, r.Padded())
	r.Apply([]float32{1, 2, 3}, out)
	var norm float64
	for _, x := range out {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-14) > 1e-4 {
		t.Fatalf("rotation changed the norm: %v, want 14", norm)
	}
}

func mustNew(t *testing.T, dim, bits int, seed uint64, sample []float32) *Quantizer {
	t.Helper()
	q, err := New(dim, L2, bits, seed, sample)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestRotationIsOrthogonal prevents a rotation that distorts distances
// (a missing normalisation, a wrong butterfly): inner products and norms
// of random vectors survive it for padded and unpadded dimensions.
func TestRotationIsOrthogonal(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dim := range []int{1, 63, 64, 100, 512, 784} {
		r := NewRotation(dim, 1)
		a, b := make([]float32, dim), make([]float32, dim)
		for i := range a {
			a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		ra, rb := make([]float32, r.Padded()), make([]float32, r.Padded())
		r.Apply(a, ra)
		r.Apply(b, rb)
		var want, got, na float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
			na += float64(a[i]) * float64(a[i])
		}
		for i := range ra {
			got += float64(ra[i]) * float64(rb[i])
		}
		if math.Abs(got-want) > 1e-4*na {
			t.Errorf("dim %d: <Pa, Pb> = %v, want %v", dim, got, want)
		}
	}
}

// TestNewRejectsBadArguments prevents a quantizer built on arguments that
// would panic or produce NaN later.
func TestNewRejectsBadArguments(t *testing.T) {
	nan := []float32{float32(math.NaN()), 0}
	for name, f := range map[string]func() error{
		"zero dim":      func() error { _, err := New(0, L2, 1, 0, nil); return err },
		"bad metric":    func() error { _, err := New(2, 9, 1, 0, nil); return err },
		"zero bits":     func() error { _, err := New(2, L2, 0, 0, nil); return err },
		"nine bits":     func() error { _, err := New(2, L2, 9, 0, nil); return err },
		"ragged":        func() error { _, err := New(2, L2, 1, 0, []float32{1, 2, 3}); return err },
		"NaN in sample": func() error { _, err := New(2, L2, 1, 0, nan); return err },
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestClusteredCentroidsShortenErrors prevents the multi-centroid coding
// from being wrong (a centroid term folded with the wrong sign, the wrong
// cluster's query terms) or useless: on data of far-apart clusters, codes
// against k-means centroids must stay within their bound and err much less
// than codes against the one global mean.
func TestClusteredCentroidsShortenErrors(t *testing.T) {
	const dim = 64
	data := synth.Clustered(3000, dim, 8, 0.2, 31)
	queries := synth.Clustered(20, dim, 8, 0.2, 32)
	for _, m := range []Metric{L2, InnerProduct} {
		one, err := New(dim, m, 4, 5, data)
		if err != nil {
			t.Fatal(err)
		}
		many, err := NewClustered(dim, m, 4, 5, data, 16)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range []estimator{oneBit, extended, fastScan} {
			_, _, absOne := errorStats(encodeAll(t, one, data), data, queries, ex, 3)
			v, bias, absMany := errorStats(encodeAll(t, many, data), data, queries, ex, 3)
			t.Logf("metric %d estimator %d: mean |error| %.5f with 16 centroids, %.5f with one; %.3f%% outside the bound, bias %.4f", m, ex, absMany, absOne, 100*v, bias)
			if v > confidence[1].maxViolations || math.Abs(bias) > 0.05 {
				t.Errorf("metric %d estimator %d: %.3f%% outside the bound, bias %.3f", m, ex, 100*v, bias)
			}
			if absMany > absOne/2 {
				t.Errorf("metric %d estimator %d: 16 centroids err %.5f, not under half of one centroid's %.5f", m, ex, absMany, absOne)
			}
		}
	}
	if got := KMeans(data, dim, 16, 3, 1); !slices.Equal(got, KMeans(data, dim, 16, 3, 1)) {
		t.Fatal("KMeans is not deterministic")
	}
}
