package rabitq

import (
	"math"
	mbits "math/bits"

	"github.com/strata-db/strata/go/kernels"
)

// Codes relative to a vector instead of a centroid, as SymphonyQG codes a
// node's neighbours (Gao & Long, SIGMOD 2025): the neighbour o of a node u
// is coded through r' = P·o − P·u, whose norm is the length of the edge
// (much shorter than o's distance to any centroid on real data), so its
// estimate's error, which grows with ‖r‖, is smaller. The estimator is the
// package doc's with u in place of the centroid: the code's own terms
// (‖r‖², or −⟨r, u⟩ for the inner product, minus Rescale·⟨x, P·u⟩) are in
// its Add, so the one quantized query P·q serves every node, and the
// query's terms of u, its distance to u (‖q − u‖² or 1 − ⟨u, q⟩) and
// ‖q − u‖, are exactly what the search measured when it reached u
// (EstimateFastFrom).

// Rotate writes P·v (v of Dim values) to out (Padded values).
func (q *Quantizer) Rotate(v, out []float32) { q.rot.Apply(v, out) }

// EncodeResidual codes o relative to u from their rotations ro = P·o and
// ru = P·u (Padded values each): the 1-bit code of ro − ru into bits
// (Words words) and its factors (Cluster 0, QErr of the 1-bit code), for
// EstimateFastFrom.
func (e *Encoder) EncodeResidual(ro, ru []float32, bits []uint64) Factors {
	q := e.q
	D := q.Padded()
	r, sign := e.buf[:D], e.abs[:D]
	ro, ru = ro[:D], ru[:D]
	bits = bits[:D/64]
	// One pass without branches (a residual's signs are coin tosses) and
	// float32 sums by the kernels: a graph codes 32 residuals a node, so
	// this is most of its build. Each word of the code is built in a
	// register, 64 dimensions at a time (or-ing every bit into the slice
	// chained each dimension to the previous one's store), and sign holds
	// x = ±1/2 of each dimension.
	pop := 0
	for w := range bits {
		rw, sw := (*[64]float32)(r[64*w:]), (*[64]float32)(sign[64*w:])
		ow, uw := (*[64]float32)(ro[64*w:]), (*[64]float32)(ru[64*w:])
		var word uint64
		for i := range 64 {
			x := ow[i] - uw[i]
			rw[i] = x
			var b uint32
			if x > 0 {
				b = 1
			}
			word |= uint64(b) << i
			sw[i] = math.Float32frombits(0x3f000000 | (b^1)<<31) // +1/2 for b = 1, −1/2 for 0
		}
		bits[w] = word
		pop += mbits.OnesCount64(word)
	}
	norm2 := float64(kernels.L2Squared(ro, ru))
	add := norm2
	if q.metric == InnerProduct {
		add = -float64(kernels.Dot(r, ru))
	}
	ipx := float64(kernels.Dot(sign, r)) // ⟨x, r'⟩ = Σ|r'ᵢ|/2
	f := q.factors(add, norm2, ipx, float64(D)/4, float64(kernels.Dot(sign, ru)))
	f.Sum = float32(pop)
	return f
}

// EstimateFastFrom is EstimateFast for a code relative to a vector u
// (EncodeResidual) in place of a centroid: centreAdd is the query's
// distance to u (‖q − u‖², or 1 − ⟨u, q⟩ for the inner product) and
// centreNorm is ‖q − u‖.
func (qq *Query) EstimateFastFrom(s uint32, add, rescale, err, sum, centreAdd, centreNorm float32) (dist, bound float32) {
	ip := qq.lo*sum + qq.delta6*float32(s) - 0.5*qq.sum6
	return add + centreAdd + rescale*ip, qq.eps*err*centreNorm + abs32(rescale)*qq.qerr6
}
