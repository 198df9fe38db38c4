package rabitq

import (
	"fmt"
	"math"
	"slices"
)

// Epsilon0 is the default ε₀ of the error bound (see the package doc), the
// value RaBitQ-Library uses. The error is close to Gaussian with standard
// deviation bound/ε₀, so the bound holds for about P(|Z| <= ε₀) of the
// pairs: 94.3% at 1.9, 99.7% at 3 (measured here: 94.8% and 99.8% on
// pypi-use512). Query.SetEpsilon changes it.
const Epsilon0 = 1.9

// MaxBits is the widest extended code: one byte per dimension.
const MaxBits = 8

// Metric is the distance a quantizer estimates.
type Metric uint8

const (
	// L2 is the squared Euclidean distance.
	L2 Metric = iota
	// InnerProduct is 1 − ⟨o, q⟩ (cosine on unit vectors).
	InnerProduct
)

// Factors are the per-code numbers of the estimator (package doc):
// dist ≈ Add + query add + Rescale·(lo·Sum + Δ·S − (2^B−1)/2·Σq'), bound =
// ε₀·(Err·‖q − c‖ + QErr·Δ). They are plain float32s so that arrays of them
// hold no pointers.
//
// The fields are six 4-byte words in this order (Add, Rescale, Err, Sum,
// QErr, Cluster), so that an array of Factors has the layout of the index
// file section holding them (go/hnsw's RBQF) and is used in place.
type Factors struct {
	Add, Rescale, Err, Sum float32
	// QErr·Δ is the standard deviation of the error the 8-bit query adds
	// (rounding errors uniform in ±Δ/2: |Rescale|·‖x‖/sqrt(12)); it matters
	// only for extended codes of many bits, whose Err is small.
	QErr float32
	// Cluster is the centroid the code is a residual of.
	Cluster uint32
}

// Quantizer codes vectors of one dimension against one centroid and
// rotation. It is immutable, and safe for concurrent use; Encoder and Query
// hold the per-goroutine scratch.
type Quantizer struct {
	rot       *Rotation
	metric    Metric
	bits      int // B of the extended code; 1 = 1-bit codes only
	dim       int
	centroids []float32 // c₀, c₁, …: rows of dim
	rc        []float32 // P·cⱼ: rows of Padded
}

// New returns a quantizer for dim-dimensional vectors whose centroid is the
// mean of sample (rows of dim; an empty sample means the origin), with
// extended codes of bits bits per dimension (1 for none, up to MaxBits),
// and the rotation drawn from seed.
func New(dim int, m Metric, bits int, seed uint64, sample []float32) (*Quantizer, error) {
	switch {
	case dim <= 0:
		return nil, fmt.Errorf("%w: dim must be positive, got %d", ErrInvalidArgument, dim)
	case m != L2 && m != InnerProduct:
		return nil, fmt.Errorf("%w: unknown metric %d", ErrInvalidArgument, m)
	case bits < 1 || bits > MaxBits:
		return nil, fmt.Errorf("%w: bits must be in [1, %d], got %d", ErrInvalidArgument, MaxBits, bits)
	case len(sample)%dim != 0:
		return nil, fmt.Errorf("%w: sample length %d is not a multiple of dim %d", ErrInvalidArgument, len(sample), dim)
	}
	mean := make([]float64, dim)
	n := len(sample) / dim
	for i := 0; i < n; i++ {
		for j, v := range sample[i*dim : (i+1)*dim] {
			mean[j] += float64(v)
		}
	}
	c := make([]float32, dim)
	for j := range c {
		if n > 0 {
			c[j] = float32(mean[j] / float64(n))
		}
		if math.IsNaN(float64(c[j])) || math.IsInf(float64(c[j]), 0) {
			return nil, fmt.Errorf("%w: sample holds a non-finite value in dimension %d", ErrInvalidArgument, j)
		}
	}
	return newWithCentroids(NewRotation(dim, seed), m, bits, c), nil
}

// NewClustered is New with the centroids of a k-means clustering of sample
// into (at most) clusters clusters, seeded by seed (KMeans): each vector is
// then coded as the residual of its nearest centroid, which shortens the
// residuals, and with them the estimates' errors, on clustered data.
func NewClustered(dim int, m Metric, bits int, seed uint64, sample []float32, clusters int) (*Quantizer, error) {
	if _, err := New(dim, m, bits, seed, sample); err != nil {
		return nil, err
	}
	if clusters < 1 {
		return nil, fmt.Errorf("%w: clusters must be positive, got %d", ErrInvalidArgument, clusters)
	}
	return newWithCentroids(NewRotation(dim, seed), m, bits, KMeans(sample, dim, clusters, kmeansIterations, seed)), nil
}

// NewWithCentroids is New with the given centroids (rows of dim), such as
// those of a quantizer read back from a file (Centroids): with the same
// dimension, metric, bits and seed it codes and estimates exactly as the
// quantizer they came from.
func NewWithCentroids(dim int, m Metric, bits int, seed uint64, centroids []float32) (*Quantizer, error) {
	return NewWithCentroidsPadded(dim, PaddedDim(dim), m, bits, seed, centroids)
}

// NewWithCentroidsPadded is NewWithCentroids with codes of padded
// dimensions (NewRotationPadded), such as LegacyPaddedDim(dim) for codes
// read from a file written before PaddedDim.
func NewWithCentroidsPadded(dim, padded int, m Metric, bits int, seed uint64, centroids []float32) (*Quantizer, error) {
	if _, err := New(dim, m, bits, seed, nil); err != nil {
		return nil, err
	}
	rot, err := NewRotationPadded(dim, padded, seed)
	if err != nil {
		return nil, err
	}
	if len(centroids) == 0 || len(centroids)%dim != 0 {
		return nil, fmt.Errorf("%w: %d centroid values for dim %d", ErrInvalidArgument, len(centroids), dim)
	}
	for i, v := range centroids {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("%w: centroid value %d is not finite", ErrInvalidArgument, i)
		}
	}
	return newWithCentroids(rot, m, bits, centroids), nil
}

func newWithCentroids(rot *Rotation, m Metric, bits int, centroids []float32) *Quantizer {
	dim := rot.dim
	q := &Quantizer{rot: rot, metric: m, bits: bits, dim: dim, centroids: centroids}
	D := q.rot.Padded()
	n := len(centroids) / dim
	q.rc = make([]float32, n*D)
	for j := 0; j < n; j++ {
		q.rot.Apply(centroids[j*dim:(j+1)*dim], q.rc[j*D:(j+1)*D])
	}
	return q
}

// SameRotation reports whether q and o rotate vectors alike (the same
// dimension, padding and rotation P), so that P·v from one (Rotate) is
// P·v for the other (EncodeRotated).
func (q *Quantizer) SameRotation(o *Quantizer) bool {
	a, b := q.rot, o.rot
	return a == b || a.dim == b.dim && a.padded == b.padded && a.block == b.block && a.scale == b.scale &&
		slices.EqualFunc(a.signs, b.signs, slices.Equal)
}

// Dim returns the dimension of the vectors coded.
func (q *Quantizer) Dim() int { return q.dim }

// Clusters returns the number of centroids.
func (q *Quantizer) Clusters() int { return len(q.centroids) / q.dim }

// Padded returns D, the number of dimensions of a code.
func (q *Quantizer) Padded() int { return q.rot.Padded() }

// Words returns the length of a 1-bit code in uint64 words (D/64).
func (q *Quantizer) Words() int { return q.rot.Padded() / 64 }

// Bits returns B of the extended codes (1 when there are none).
func (q *Quantizer) Bits() int { return q.bits }

// Metric returns the distance estimated.
func (q *Quantizer) Metric() Metric { return q.metric }

// Centroids returns the centroids, rows of Dim (not a copy: do not modify
// them).
func (q *Quantizer) Centroids() []float32 { return q.centroids }

// metricScale is k in dist = … + k·⟨r, q − c⟩: −2 for L2, −1 for 1 − dot.
func (q *Quantizer) metricScale() float64 {
	if q.metric == L2 {
		return -2
	}
	return -1
}
