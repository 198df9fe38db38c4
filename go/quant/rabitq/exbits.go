package rabitq

import "math"

// The scale t of an extended code (package doc) is searched on a grid:
// exCoarseSteps values of t in (0, exRange·2^(B−1)/max|r'ᵢ|], then
// exFineSteps values around the best. Each trial costs one pass over the
// D magnitudes; the cosine it finds is within about 1e-4 of the optimum
// over all t on real data (RaBitQ-Library enumerates the critical values
// of t instead, which finds the exact optimum at a higher cost).
const (
	exCoarseSteps = 32
	exFineSteps   = 12
	// exRange reaches past the t at which the largest magnitude saturates:
	// at few bits the best code clips the largest coordinates.
	exRange = 2.0
)

// encodeEx writes the B-bit code of r' to ex and returns ⟨x, r'⟩, ‖x‖² and
// Σuᵢ of it.
func (e *Encoder) encodeEx(r []float32, ex []uint8) (ipx, xnorm2 float64, sum int) {
	B := e.q.bits
	top := float64(int(1)<<(B-1) - 1) // largest mᵢ
	a := e.abs[:len(r)]
	amax := float32(0)
	for i, x := range r {
		a[i] = float32(math.Abs(float64(x)))
		amax = max(amax, a[i])
	}
	if amax == 0 {
		// r' = 0: any code has ⟨x, r'⟩ = 0; write the all-negative-smallest one.
		for i := range ex {
			ex[i] = uint8(top)
		}
		return 0, float64(len(r)) / 4, len(r) * int(top)
	}
	// cos(t) up to the constant ‖r'‖: ⟨m + 1/2, |r'|⟩ / ‖m + 1/2‖. The
	// magnitudes are non-negative, so int() is the floor.
	topInt := int32(top)
	cosAt := func(t float32) float64 {
		var ip, nn float32
		for _, v := range a {
			m := min(int32(t*v), topInt)
			mag := float32(m) + 0.5
			ip += mag * v
			nn += mag * mag
		}
		return float64(ip) / math.Sqrt(float64(nn))
	}
	hi := exRange * (top + 1) / float64(amax)
	step := hi / exCoarseSteps
	bestT, best := step, -1.0
	for s := 1; s <= exCoarseSteps; s++ {
		t := step * float64(s)
		if c := cosAt(float32(t)); c > best {
			bestT, best = t, c
		}
	}
	lo := bestT - step
	fine := 2 * step / exFineSteps
	for s := 0; s <= exFineSteps; s++ {
		t := lo + fine*float64(s)
		if t <= 0 {
			continue
		}
		if c := cosAt(float32(t)); c > best {
			bestT, best = t, c
		}
	}
	half := int(1) << (B - 1)
	t := float32(bestT)
	for i, x := range r {
		m := int(min(int32(t*a[i]), topInt))
		mag := float64(m) + 0.5
		var u int
		if x > 0 {
			u = half + m
			ipx += mag * float64(x)
		} else {
			u = half - 1 - m
			ipx -= mag * float64(x)
		}
		xnorm2 += mag * mag
		ex[i] = uint8(u)
		sum += u
	}
	return ipx, xnorm2, sum
}
