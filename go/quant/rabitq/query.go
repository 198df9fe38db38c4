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

	// FastScan operand (EnableFastScan): the same rotation quantized to 6
	// bits, q'ᵢ ≈ lo + delta6·q6ᵢ with q6ᵢ in [0, 63], and its tables.
	fast   bool
	code6  []uint8
	LUT    []uint8 // kernels.FastScanLUT of the 6-bit query, D/4 tables of 16 bytes
	delta6 float32
	sum6   float32 // Σ (lo + delta6·q6ᵢ)
	qerr6  float32 // ε₀·sqrt(D/48)·delta6: with |Rescale|, the 6-bit query's share of the bound
}

// NewQuery returns scratch for preparing queries of q.
func (q *Quantizer) NewQuery() *Query {
	return &Query{q: q, buf: make([]float32, q.Padded()), Code: make([]uint8, q.Padded()), eps: Epsilon0,
		add: make([]float32, q.Clusters()), norm: make([]float32, q.Clusters())}
}

// SetEpsilon sets ε₀ of the bounds Estimate1 and EstimateEx return (by
// default Epsilon0).
func (qq *Query) SetEpsilon(eps float32) { qq.eps = eps }

// EnableFastScan makes Prepare also build the operand of EstimateFast: the
// rotated query quantized to 6 bits and its kernels.FastScanLUT tables in
// LUT (D/4·16 bytes), for estimating blocks of 32 1-bit codes with
// kernels.FastScan32. It costs about D/4·16 byte additions per query.
func (qq *Query) EnableFastScan() {
	D := qq.q.Padded()
	qq.fast = true
	qq.code6 = make([]uint8, D)
	qq.LUT = make([]uint8, 4*D)
}

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
	lo, hi := minMax(r)
	delta := (hi - lo) / 255
	if qq.fast && delta > 0 {
		qq.quantizeBoth(r, lo, hi)
		kernels.FastScanLUT(qq.code6[:D], qq.LUT)
		return
	}
	qq.lo, qq.delta, qq.sum = lo, delta, quantize(r, lo, delta, 255, qq.Code[:D])
	if qq.fast {
		qq.prepareFast(r, lo, hi)
	}
}

// PrepareFastFrom makes v the current query of EstimateFastFrom only: P·v
// and its 6-bit FastScan operand (EnableFastScan must have been called),
// without the centroid terms and the 8-bit operand that Estimate1,
// EstimateFast and EstimateEx need (they are left stale). A search that
// estimates only codes relative to vectors (EncodeResidual) saves their
// cost per query this way.
func (qq *Query) PrepareFastFrom(v []float32) {
	if !qq.fast {
		panic("rabitq: PrepareFastFrom without EnableFastScan")
	}
	r := qq.buf
	qq.q.rot.Apply(v, r)
	lo, hi := minMax(r)
	qq.lo = lo
	qq.prepareFast(r, lo, hi)
}

// minMax returns the smallest and the largest value of r (a zero as +0).
func minMax(r []float32) (lo, hi float32) { return kernels.MinMax(r) }

// quantize writes r's values on the grid lo + delta·uᵢ, uᵢ in [0, top],
// rounded to nearest, to code and returns Σ (lo + delta·uᵢ); with delta 0
// (every value equal) every uᵢ is 0.
func quantize(r []float32, lo, delta float32, top int, code []uint8) (sum float32) {
	total := 0
	if delta > 0 {
		total = kernels.Quantize(r, lo, 1/delta, top, code)
	} else {
		clear(code)
	}
	return lo*float32(len(r)) + delta*float32(total)
}

// quantizeBoth is quantize to 8 bits into Code and to 6 bits into code6
// (the two operands of a query with FastScan), for hi > lo with
// (hi − lo)/255 > 0, and sets their terms as Prepare and prepareFast do.
func (qq *Query) quantizeBoth(r []float32, lo, hi float32) {
	delta, delta6 := (hi-lo)/255, (hi-lo)/63
	total := kernels.Quantize(r, lo, 1/delta, 255, qq.Code[:len(r)])
	total6 := kernels.Quantize(r, lo, 1/delta6, 63, qq.code6[:len(r)])
	qq.lo, qq.delta, qq.delta6 = lo, delta, delta6
	qq.sum = lo*float32(len(r)) + delta*float32(total)
	qq.sum6 = lo*float32(len(r)) + delta6*float32(total6)
	qq.qerr6 = qq.eps * float32(math.Sqrt(float64(len(r))/48)) * delta6
}

// prepareFast quantizes the rotated query r to 6 bits on the grid from lo
// to hi (so that four values add up to at most 252 and the FastScan
// tables hold bytes) and builds the tables.
func (qq *Query) prepareFast(r []float32, lo, hi float32) {
	delta := (hi - lo) / 63
	qq.delta6 = delta
	qq.sum6 = quantize(r, lo, delta, 63, qq.code6[:len(r)])
	kernels.FastScanLUT(qq.code6[:len(r)], qq.LUT)
	// A 1-bit code's QErr is |Rescale|·sqrt(‖x‖²/12) with ‖x‖² = D/4.
	qq.qerr6 = qq.eps * float32(math.Sqrt(float64(len(r))/48)) * delta
}

// Estimate1 returns the estimated distance to the vector whose 1-bit code
// has factors f and kernel sum s = Σ bitᵢ·qᵢ (kernels.BitDotU8), and the
// error bound of the estimate.
func (qq *Query) Estimate1(s uint32, f Factors) (dist, bound float32) {
	ip := qq.lo*f.Sum + qq.delta*float32(s) - 0.5*qq.sum
	return f.Add + qq.add[f.Cluster] + f.Rescale*ip, qq.eps * (f.Err*qq.norm[f.Cluster] + f.QErr*qq.delta)
}

// EstimateFast is Estimate1 for the FastScan operand (EnableFastScan): s =
// Σ bitᵢ·q6ᵢ is the kernels.FastScan32 sum of the code against LUT, and the
// factors are passed one by one (as a block of codes stores them; the
// 1-bit code's QErr follows from Rescale). The bound includes the 6-bit
// query's rounding, four times the 8-bit query's.
func (qq *Query) EstimateFast(s uint32, add, rescale, err, sum float32, cluster uint32) (dist, bound float32) {
	ip := qq.lo*sum + qq.delta6*float32(s) - 0.5*qq.sum6
	return add + qq.add[cluster] + rescale*ip, qq.eps*err*qq.norm[cluster] + abs32(rescale)*qq.qerr6
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// EstimateEx is Estimate1 for an extended code, with s = Σ uᵢ·qᵢ
// (kernels.DotU8 of the code and Code).
func (qq *Query) EstimateEx(s uint32, f Factors) (dist, bound float32) {
	half := float32(int(1)<<qq.q.bits-1) / 2
	ip := qq.lo*f.Sum + qq.delta*float32(s) - half*qq.sum
	return f.Add + qq.add[f.Cluster] + f.Rescale*ip, qq.eps * (f.Err*qq.norm[f.Cluster] + f.QErr*qq.delta)
}

// EstimateExTerms is EstimateEx's distance (without its bound) from the
// two factors an index of extended codes keeps when it needs no bound,
// add and rescale (Factors.Add, Factors.Rescale), and the code's own
// Σ uᵢ (Factors.Sum), which such an index counts from the code instead of
// storing it; cluster is the code's centroid.
func (qq *Query) EstimateExTerms(s, sum uint32, add, rescale float32, cluster uint32) float32 {
	half := float32(int(1)<<qq.q.bits-1) / 2
	ip := qq.lo*float32(sum) + qq.delta*float32(s) - half*qq.sum
	return add + qq.add[cluster] + rescale*ip
}
