package rabitq

import (
	"math"

	"github.com/strata-db/strata/go/kernels"
)

// Query is a query prepared for estimating distances to codes: its rotated
// residual quantized to 8 bits (package doc). Reuse one per goroutine.
type Query struct {
	q     *Quantizer
	buf   []float32
	Code  []uint8 // qᵢ in [0, 255], Padded bytes: the kernels' query operand
	lo    float32 // q'ᵢ ≈ lo + delta·qᵢ
	delta float32
	sum   float32   // Σ (lo + delta·qᵢ)
	add   []float32 // per centroid: the query's term of the distance
	norm  []float32 // per centroid: ‖q − cⱼ‖
	eps   float32   // ε₀
}

// NewQuery returns scratch for preparing queries of q.
func (q *Quantizer) NewQuery() *Query {
	return &Query{q: q, buf: make([]float32, q.Padded()), Code: make([]uint8, q.Padded()), eps: Epsilon0,
		add: make([]float32, q.Clusters()), norm: make([]float32, q.Clusters())}
}

// SetEpsilon sets ε₀ of the bounds Estimate1 and EstimateEx return (by
// default Epsilon0).
func (qq *Query) SetEpsilon(eps float32) { qq.eps = eps }

// Prepare makes v (length Dim) the current query: P·v quantized, which
// serves every centroid (each code's Add holds its ⟨x, c'⟩), and the terms
// of each centroid.
func (qq *Query) Prepare(v []float32) {
	q := qq.q
	r := qq.buf
	q.rot.Apply(v, r)
	D := len(r)
	for j := range qq.add {
		rc := q.rc[j*D : (j+1)*D]
		norm2 := kernels.L2Squared(r, rc)
		qq.norm[j] = float32(math.Sqrt(float64(norm2)))
		if q.metric == L2 {
			qq.add[j] = norm2
		} else {
			qq.add[j] = 1 - kernels.Dot(r, rc)
		}
	}
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, x := range r {
		lo, hi = min(lo, x), max(hi, x)
	}
	delta := (hi - lo) / 255
	code := qq.Code[:len(r)]
	total := 0
	if delta > 0 {
		inv := 1 / delta
		for i, x := range r {
			u := int((x-lo)*inv + 0.5)
			u = min(max(u, 0), 255)
			code[i] = uint8(u)
			total += u
		}
	} else {
		clear(code)
	}
	qq.lo, qq.delta = lo, delta
	qq.sum = lo*float32(len(r)) + delta*float32(total)
}

// Estimate1 returns the estimated distance to the vector whose 1-bit code
// has factors f and kernel sum s = Σ bitᵢ·qᵢ (kernels.BitDotU8), and the
// error bound of the estimate.
func (qq *Query) Estimate1(s uint32, f Factors) (dist, bound float32) {
	ip := qq.lo*f.Sum + qq.delta*float32(s) - 0.5*qq.sum
	return f.Add + qq.add[f.Cluster] + f.Rescale*ip, qq.eps * (f.Err*qq.norm[f.Cluster] + f.QErr*qq.delta)
}

// EstimateEx is Estimate1 for an extended code, with s = Σ uᵢ·qᵢ
// (kernels.DotU8 of the code and Code).
func (qq *Query) EstimateEx(s uint32, f Factors) (dist, bound float32) {
	half := float32(int(1)<<qq.q.bits-1) / 2
	ip := qq.lo*f.Sum + qq.delta*float32(s) - half*qq.sum
	return f.Add + qq.add[f.Cluster] + f.Rescale*ip, qq.eps * (f.Err*qq.norm[f.Cluster] + f.QErr*qq.delta)
}
