package rabitq

import (
	"math"
	mbits "math/bits"

	"github.com/strata-db/strata/go/kernels"
)

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
	e.q.rot.Apply(v, e.buf[:e.q.Padded()])
	return e.encodeBuf(bits, ex)
}

// EncodeRotated is Encode of the vector whose rotation P·v (Rotate) is rv,
// Padded values: the same codes and factors, bit for bit, for a caller
// that has rotated the vector already (a quantized graph's build rotates
// every vector once, for its edges' codes and for its own).
func (e *Encoder) EncodeRotated(rv []float32, bits []uint64, ex []uint8) (f1, fx Factors) {
	D := e.q.Padded()
	copy(e.buf[:D], rv[:D])
	return e.encodeBuf(bits, ex)
}

// encodeBuf is Encode of the rotated vector in e.buf.
func (e *Encoder) encodeBuf(bits []uint64, ex []uint8) (f1, fx Factors) {
	q := e.q
	D := q.Padded()
	r := e.buf[:D]
	cluster := 0
	if q.Clusters() > 1 {
		best := float32(math.Inf(1))
		for j := 0; j < q.Clusters(); j++ {
			if d := kernels.L2Squared(r, q.rc[j*D:(j+1)*D]); d < best {
				best, cluster = d, j
			}
		}
	}
	rc := q.rc[cluster*D : (cluster+1)*D]
	var norm2, ipc float64
	for i := range r {
		r[i] -= rc[i]
		norm2 += float64(r[i]) * float64(r[i])
		ipc += float64(r[i]) * float64(rc[i])
	}
	add := norm2
	if q.metric == InnerProduct {
		add = -ipc
	}
	f1 = q.encode1(r, rc, bits, add, norm2)
	f1.Cluster = uint32(cluster)
	if q.bits == 1 || ex == nil {
		return f1, Factors{}
	}
	ipx, xnorm2, sum := e.encodeEx(r, ex[:D])
	half := float64(int(1)<<q.bits-1) / 2
	ipxc := 0.0
	for i, u := range ex[:D] {
		ipxc += (float64(u) - half) * float64(rc[i])
	}
	fx = q.factors(add, norm2, ipx, xnorm2, ipxc)
	fx.Sum, fx.Cluster = float32(sum), uint32(cluster)
	return f1, fx
}

// encode1 writes the 1-bit code of the rotated residual r of the rotated
// centre rc into bits and returns its factors (Cluster 0), given the
// residual's own distance term add and ‖r‖².
func (q *Quantizer) encode1(r, rc []float32, bits []uint64, add, norm2 float64) Factors {
	// 1-bit code: x = ±1/2, ⟨x, r'⟩ = Σ|r'|/2, ‖x‖² = D/4.
	// Without branches (a residual's signs are coin tosses), each word of
	// the code built in a register: ipxc − 0.5·c is ipxc + (−0.5)·c, bit
	// for bit, so the sums are those of the branching loop.
	D := len(r)
	bits = bits[:D/64]
	rc = rc[:D]
	var absSum, ipxc float64 // Σ|r'ᵢ|, ⟨x, c'⟩
	pop := 0
	for w := range bits {
		rw, cw := (*[64]float32)(r[64*w:]), (*[64]float32)(rc[64*w:])
		var word uint64
		for i := range 64 {
			x := rw[i]
			half := -0.5
			var b uint64
			if x > 0 {
				half, b = 0.5, 1
			}
			word |= b << i
			ipxc += half * float64(cw[i])
			absSum += math.Abs(float64(x))
		}
		bits[w] = word
		pop += mbits.OnesCount64(word)
	}
	f := q.factors(add, norm2, absSum/2, float64(D)/4, ipxc)
	f.Sum = float32(pop)
	return f
}

// factors returns Add, Rescale and Err of a code x of residual r' given
// ‖r'‖², ⟨x, r'⟩, ‖x‖² and ⟨x, c'⟩ (package doc; the last is folded into Add
// so that the query's quantized operand is P·q for every centroid). A
// residual of zero (the vector is the centroid) gets Rescale = Err = 0: its
// distance is Add + query add.
func (q *Quantizer) factors(add, norm2, ipx, xnorm2, ipxc float64) Factors {
	f := Factors{Add: float32(add)}
	if norm2 == 0 || ipx <= 0 {
		return f
	}
	k := q.metricScale()
	rescale := k * norm2 / ipx
	f.Rescale = float32(rescale)
	f.Add = float32(add - rescale*ipxc)
	gamma := ipx / math.Sqrt(xnorm2*norm2)
	gamma = min(gamma, 1)
	D := float64(q.Padded())
	f.Err = float32(math.Abs(k) * math.Sqrt(norm2) * math.Sqrt((1-gamma*gamma)/(gamma*gamma*(D-1))))
	f.QErr = float32(math.Abs(float64(f.Rescale)) * math.Sqrt(xnorm2/12))
	return f
}
