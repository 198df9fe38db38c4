// Package sq8 is strata's 8-bit scalar quantizer: one byte per dimension,
// with a per-dimension offset and one step shared by all dimensions.
//
//	x[d] ≈ lo[d] + step·c[d],   c[d] = clamp(round((x[d]-lo[d]) / step), 0, 255)
//
// lo[d] is the smallest value of dimension d in the training sample and step
// is the widest dimension's range divided by 255. A shared step is what lets
// distances between codes be computed exactly with integer SIMD kernels
// (kernels.L2U8, kernels.DotU8) and still be proportional to distances
// between the decoded vectors:
//
//	‖x−y‖²  ≈ step² · Σ (cx−cy)²
//	⟨x, y⟩  ≈ Σ lo² + a(x) + a(y) + step² · Σ cx·cy,   a(x) = step · Σ lo·cx
//
// a(x) is computed once per vector at encoding and stored beside the code.
// Per-dimension steps would fit narrow dimensions more tightly but turn
// these sums into weighted ones no integer kernel computes; the error the
// shared step adds is removed by re-ranking with the float vectors.
// Values outside the trained range are clamped.
package sq8

import (
	"errors"
	"fmt"
	"math"

	"github.com/strata-db/strata/go/kernels"
)

// ErrUntrained is returned when encoding with a quantizer that has no ranges.
var ErrUntrained = errors.New("sq8: quantizer is not trained")

// Quantizer holds the trained ranges. Its fields are persisted as is.
type Quantizer struct {
	Lo     []float32 // per-dimension offset
	Step   float32   // shared step (> 0 once trained)
	LoNorm float32   // Σ lo², the constant term of the inner product
}

// Train learns ranges from n = len(sample)/dim row-major vectors.
func Train(sample []float32, dim int) (*Quantizer, error) {
	if dim <= 0 || len(sample) == 0 || len(sample)%dim != 0 {
		return nil, fmt.Errorf("sq8: training sample of %d floats does not hold whole rows of dim %d", len(sample), dim)
	}
	var t Trainer
	for off := 0; off < len(sample); off += dim {
		t.Observe(sample[off : off+dim])
	}
	return t.Quantizer(), nil
}

// Trainer learns ranges one row at a time, so a caller that transforms rows
// (normalising them for cosine, say) needs no copy of the whole sample.
type Trainer struct {
	lo, hi []float32
}

// Observe widens the ranges to include row. Every row must have the same
// length.
func (t *Trainer) Observe(row []float32) {
	if t.lo == nil {
		t.lo = append([]float32(nil), row...)
		t.hi = append([]float32(nil), row...)
		return
	}
	lo, hi := t.lo[:len(row)], t.hi[:len(row)]
	for d, v := range row {
		lo[d] = min(lo[d], v)
		hi[d] = max(hi[d], v)
	}
}

// Quantizer returns the quantizer for the rows observed (nil if none).
func (t *Trainer) Quantizer() *Quantizer {
	if t.lo == nil {
		return nil
	}
	var width float64
	for d := range t.lo {
		width = max(width, float64(t.hi[d])-float64(t.lo[d]))
	}
	if width == 0 {
		// Every sample identical: any positive step encodes them exactly.
		width = 1
	}
	q := &Quantizer{Lo: t.lo, Step: float32(width / 255)}
	q.LoNorm = kernels.Dot(t.lo, t.lo)
	return q
}

// Validate checks a quantizer read from disk.
func (q *Quantizer) Validate(dim int) error {
	if len(q.Lo) != dim {
		return fmt.Errorf("sq8: quantizer has %d offsets for dim %d", len(q.Lo), dim)
	}
	if !(q.Step > 0) || math.IsInf(float64(q.Step), 0) {
		return fmt.Errorf("sq8: quantizer step %v is not a positive finite number", q.Step)
	}
	return nil
}

// Encode writes v's code into code (len(v)) and returns a(v), the vector's
// share of inner products.
func (q *Quantizer) Encode(v []float32, code []uint8) float32 {
	inv := 1 / q.Step
	var a float32
	code = code[:len(v)]
	lo := q.Lo[:len(v)]
	for d, x := range v {
		c := math.Round(float64((x - lo[d]) * inv))
		c = min(max(c, 0), 255)
		code[d] = uint8(c)
		a += lo[d] * float32(c)
	}
	return a * q.Step
}

// Decode writes the reconstruction of code into v.
func (q *Quantizer) Decode(code []uint8, v []float32) {
	v = v[:len(code)]
	for d, c := range code {
		v[d] = q.Lo[d] + q.Step*float32(c)
	}
}

// L2 is the squared Euclidean distance between two codes.
func (q *Quantizer) L2(a, b []uint8) float32 {
	return q.Step * q.Step * float32(kernels.L2U8(a, b))
}

// Dot is the inner product between two coded vectors with shares aa, ab.
func (q *Quantizer) Dot(a []uint8, aa float32, b []uint8, ab float32) float32 {
	return q.LoNorm + aa + ab + q.Step*q.Step*float32(kernels.DotU8(a, b))
}
