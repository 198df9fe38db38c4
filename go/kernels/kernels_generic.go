package kernels

import "math"

// The pure-Go kernels are the reference every assembly path is tested
// against, and the fallback on other architectures or with -tags noasm.

// dotGeneric is the reference dot product: four independent accumulators so
// the loop is not latency-bound on a single add chain.
func dotGeneric(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// l2Generic is the reference squared Euclidean distance.
func l2Generic(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		d0 := a[i] - b[i]
		d1 := a[i+1] - b[i+1]
		d2 := a[i+2] - b[i+2]
		d3 := a[i+3] - b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < n; i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// l1Generic is the reference Manhattan distance, the sum of |a[i]-b[i]|.
func l1Generic(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += abs32(a[i] - b[i])
		s1 += abs32(a[i+1] - b[i+1])
		s2 += abs32(a[i+2] - b[i+2])
		s3 += abs32(a[i+3] - b[i+3])
	}
	for ; i < n; i++ {
		s0 += abs32(a[i] - b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// abs32 clears the sign bit, as the assembly does (math.Abs would go
// through float64).
func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// l2RowsLoop is the reference multi-row kernel: one L2Squared call per id,
// on whichever one-row path is selected.
//
//lint:ignore U1000 on amd64 it is called only from the dispatch stub in rows_amd64.s
func l2RowsLoop(q, rows []float32, ids []uint32, out []float32) {
	d := len(q)
	out = out[:len(ids)]
	for i, id := range ids {
		off := int(id) * d
		out[i] = l2(q, rows[off:off+d])
	}
}

// dotRowsLoop is the reference multi-row dot product, like l2RowsLoop.
//
//lint:ignore U1000 on amd64 it is called only from the dispatch stub in rows_amd64.s
func dotRowsLoop(q, rows []float32, ids []uint32, out []float32) {
	d := len(q)
	out = out[:len(ids)]
	for i, id := range ids {
		off := int(id) * d
		out[i] = dot(q, rows[off:off+d])
	}
}

// dotU8Generic is the reference SQ8 dot product. Arithmetic is modulo 2^32,
// which is exact for len(a) <= 65536 (65536·255² < 2^32); every path wraps the
// same way beyond that, so results stay bit-identical.
func dotU8Generic(a, b []uint8) uint32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3 uint32
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += uint32(a[i]) * uint32(b[i])
		s1 += uint32(a[i+1]) * uint32(b[i+1])
		s2 += uint32(a[i+2]) * uint32(b[i+2])
		s3 += uint32(a[i+3]) * uint32(b[i+3])
	}
	for ; i < n; i++ {
		s0 += uint32(a[i]) * uint32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// l2U8Generic is the reference SQ8 squared Euclidean distance, modulo 2^32
// like dotU8Generic.
func l2U8Generic(a, b []uint8) uint32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3 uint32
	i := 0
	for ; i+4 <= n; i += 4 {
		d0 := int32(a[i]) - int32(b[i])
		d1 := int32(a[i+1]) - int32(b[i+1])
		d2 := int32(a[i+2]) - int32(b[i+2])
		d3 := int32(a[i+3]) - int32(b[i+3])
		s0 += uint32(d0 * d0)
		s1 += uint32(d1 * d1)
		s2 += uint32(d2 * d2)
		s3 += uint32(d3 * d3)
	}
	for ; i < n; i++ {
		d := int32(a[i]) - int32(b[i])
		s0 += uint32(d * d)
	}
	return s0 + s1 + s2 + s3
}
