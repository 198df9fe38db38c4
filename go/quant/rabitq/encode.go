package rabitq

import "math"

// Encoder codes vectors with one quantizer; it holds scratch, so use one
// per goroutine.
type Encoder struct {
	q   *Quantizer
	buf []float32 // rotated residual r'
	abs []float32 // |r'|
}

// NewEncoder returns an encoder for q.
func (q *Quantizer) NewEncoder() *Encoder {
	return &Encoder{q: q, buf: make([]float32, q.Padded()), abs: make([]float32, q.Padded())}
}

// Encode codes v (length Dim): its 1-bit code into bits (Words words) and,
// when the quantizer has extended codes (Bits > 1) and ex is not nil, its
// B-bit code into ex (Padded bytes). It returns the factors of each code
// (fx is zero without an extended code).
func (e *Encoder) Encode(v []float32, bits []uint64, ex []uint8) (f1, fx Factors) {
	q := e.q
	D := q.Padded()
	r := e.buf[:D]
	q.rot.Apply(v, r)
	var norm2, ipc float64
	for i := range r {
		r[i] -= q.rc[i]
		norm2 += float64(r[i]) * float64(r[i])
		ipc += float64(r[i]) * float64(q.rc[i])
	}
	add := norm2
	if q.metric == InnerProduct {
		add = -ipc
	}

	// 1-bit code: x = ±1/2, ⟨x, r'⟩ = Σ|r'|/2, ‖x‖² = D/4.
	bits = bits[:D/64]
	clear(bits)
	var absSum float64
	pop := 0
	for i, x := range r {
		if x > 0 {
			bits[i>>6] |= 1 << (i & 63)
			pop++
		}
		absSum += math.Abs(float64(x))
	}
	f1 = q.factors(add, norm2, absSum/2, float64(D)/4)
	f1.Sum = float32(pop)
	if q.bits == 1 || ex == nil {
		return f1, Factors{}
	}
	ipx, xnorm2, sum := e.encodeEx(r, ex[:D])
	fx = q.factors(add, norm2, ipx, xnorm2)
	fx.Sum = float32(sum)
	return f1, fx
}

// factors returns Add, Rescale and Err of a code x of residual r' given
// ‖r'‖², ⟨x, r'⟩ and ‖x‖² (package doc). A residual of zero (the vector is
// the centroid) gets Rescale = Err = 0: its distance is Add + query add.
func (q *Quantizer) factors(add, norm2, ipx, xnorm2 float64) Factors {
	f := Factors{Add: float32(add)}
	if norm2 == 0 || ipx <= 0 {
		return f
	}
	k := q.metricScale()
	f.Rescale = float32(k * norm2 / ipx)
	gamma := ipx / math.Sqrt(xnorm2*norm2)
	gamma = min(gamma, 1)
	D := float64(q.Padded())
	f.Err = float32(math.Abs(k) * math.Sqrt(norm2) * math.Sqrt((1-gamma*gamma)/(gamma*gamma*(D-1))))
	f.QErr = float32(math.Abs(float64(f.Rescale)) * math.Sqrt(xnorm2/12))
	return f
}
