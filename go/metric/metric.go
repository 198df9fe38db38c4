// Package metric names the distance functions strata supports and computes
// them with the same conventions as hnswlib, so results can be compared
// number for number:
//
//	l2      squared Euclidean distance (no square root)
//	ip      1 - <a, b>
//	cosine  1 - <a, b> on vectors normalised to unit length on insert
//	        (and queries normalised before search)
//	l1      Manhattan distance, the sum of |a[i] - b[i]| (Qdrant's
//	        "Manhattan"; hnswlib has none)
package metric

import (
	"fmt"
	"math"

	"github.com/strata-db/strata/go/kernels"
)

// Metric identifies a distance function. The numeric values are part of the
// C ABI and the on-disk format: do not change them.
type Metric uint8

const (
	L2     Metric = 0
	IP     Metric = 1
	Cosine Metric = 2
	// Manhattan is the L1 distance. Graphs over it keep float vectors:
	// neither SQ8 nor RaBitQ codes estimate it.
	Manhattan Metric = 3
)

// String returns the metric's user-facing name.
func (m Metric) String() string {
	switch m {
	case L2:
		return "l2"
	case IP:
		return "ip"
	case Cosine:
		return "cosine"
	case Manhattan:
		return "l1"
	}
	return fmt.Sprintf("metric(%d)", uint8(m))
}

// Parse maps a user-facing name to a Metric.
func Parse(name string) (Metric, error) {
	switch name {
	case "l2":
		return L2, nil
	case "ip":
		return IP, nil
	case "cosine":
		return Cosine, nil
	case "l1", "manhattan":
		return Manhattan, nil
	}
	return 0, fmt.Errorf("metric: unknown metric %q (want l2, ip, cosine or l1)", name)
}

// Valid reports whether m is one of the defined metrics.
func (m Metric) Valid() bool { return m <= Manhattan }

// Distance computes the distance between a and b under m. For Cosine both
// vectors must already be normalised.
func (m Metric) Distance(a, b []float32) float32 {
	switch m {
	case L2:
		return kernels.L2Squared(a, b)
	case Manhattan:
		return kernels.L1(a, b)
	}
	return 1 - kernels.Dot(a, b)
}

// NeedsNormalize reports whether vectors are normalised on insert and query.
func (m Metric) NeedsNormalize() bool { return m == Cosine }

// Normalize scales v to unit length in place. A zero vector is left as is
// (its cosine distance to everything is then 1, as in hnswlib).
func Normalize(v []float32) {
	n := kernels.Dot(v, v)
	if n == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(float64(n)))
	for i := range v {
		v[i] *= inv
	}
}
