package rabitq

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
	r := e.buf[:D]
	ro, ru = ro[:D], ru[:D]
	var norm2, ipc float64
	for i := range r {
		r[i] = ro[i] - ru[i]
		norm2 += float64(r[i]) * float64(r[i])
		ipc += float64(r[i]) * float64(ru[i])
	}
	add := norm2
	if q.metric == InnerProduct {
		add = -ipc
	}
	return q.encode1(r, ru, bits, add, norm2)
}

// EstimateFastFrom is EstimateFast for a code relative to a vector u
// (EncodeResidual) in place of a centroid: centreAdd is the query's
// distance to u (‖q − u‖², or 1 − ⟨u, q⟩ for the inner product) and
// centreNorm is ‖q − u‖.
func (qq *Query) EstimateFastFrom(s uint32, add, rescale, err, sum, centreAdd, centreNorm float32) (dist, bound float32) {
	ip := qq.lo*sum + qq.delta6*float32(s) - 0.5*qq.sum6
	return add + centreAdd + rescale*ip, qq.eps*err*centreNorm + abs32(rescale)*qq.qerr6
}
