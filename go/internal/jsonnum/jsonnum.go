// Package jsonnum reads JSON numbers and lists of numbers straight from
// request bytes, for both of strata-server's doors (the native routes and
// the Qdrant door) and for the document decoder of go/collection/meta:
// one pass over the text, one strconv call per number at most, no
// reflection and no allocation per element. encoding/json decoding a
// vector costs several times more, and for a query or an upsert it was
// most of the time a door spent outside the engine.
//
// It accepts exactly RFC 8259's number grammar: "NaN", "Infinity",
// strings, hex, and leading '+' or zeros are not numbers. It makes no
// error messages: each door says what was wrong in its own words, and a
// door may fall back to its slower reader to produce them.
package jsonnum

import (
	"math"
	"strconv"
	"unsafe"
)

// Fault says why Number found no number.
type Fault int

const (
	// OK: a number was read.
	OK Fault = iota
	// NotANumber: the text at pos does not start a number (no digit, or a
	// leading zero followed by digits).
	NotANumber
	// NoFractionDigits: a number started but its fraction has no digits
	// ("1.").
	NoFractionDigits
	// NoExponentDigits: a number started but its exponent has no digits
	// ("1e", "1e+").
	NoExponentDigits
)

// SkipSpace returns the position of the first byte at or after pos that
// is not JSON whitespace.
func SkipSpace(data []byte, pos int) int {
	for pos < len(data) {
		switch data[pos] {
		case ' ', '\t', '\n', '\r':
			pos++
		default:
			return pos
		}
	}
	return pos
}

// Number reads the JSON number at data[pos]: its end, whether it is an
// integer (no fraction or exponent), and OK, or why there is none. On a
// fault, end is where the number went wrong: the byte that should have
// been a digit (after the sign, after a leading zero, after the '.', after
// the exponent's sign), for a reader's error message.
func Number(data []byte, pos int) (end int, integer bool, fault Fault) {
	i := pos
	if i < len(data) && data[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	intStart := i
	n := digits()
	switch {
	case n == 0:
		return intStart, false, NotANumber
	case n > 1 && data[intStart] == '0':
		return intStart + 1, false, NotANumber
	}
	integer = true
	if i < len(data) && data[i] == '.' {
		i++
		integer = false
		if digits() == 0 {
			return i, false, NoFractionDigits
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		integer = false
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, false, NoExponentDigits
		}
	}
	return i, integer, OK
}

// float32Pow10 are the powers of ten a float32 holds exactly.
var float32Pow10 = [...]float32{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}

// ShortFloat reads the number at data[pos] if it is a plain decimal
// (-?int(.frac)?, no exponent) of at most 10 fraction digits whose digits
// make an integer below 2^23, such as the 6-significant-digit floats most
// clients send: such a number is that integer divided by a power of ten,
// both exact in float32, so one float32 division rounds it correctly,
// exactly as strconv.ParseFloat(s, 32) does on its own fast path
// (atof32exact). It costs a quarter of strconv's general parse. Anything
// else (longer mantissas, exponents, malformed text) reports !ok, for
// Number and strconv to read (or refuse).
func ShortFloat(data []byte, pos int) (f float32, end int, ok bool) {
	i := pos
	neg := i < len(data) && data[i] == '-'
	if neg {
		i++
	}
	intStart := i
	var mantissa uint32
	for ; i < len(data) && data[i] >= '0' && data[i] <= '9'; i++ {
		if mantissa = mantissa*10 + uint32(data[i]-'0'); mantissa >= 1<<23 {
			return 0, 0, false // too many digits: let strconv round
		}
	}
	if i == intStart || (i-intStart > 1 && data[intStart] == '0') {
		return 0, 0, false // no digits, or a leading zero: an error
	}
	fraction := 0
	if i < len(data) && data[i] == '.' {
		i++
		fracStart := i
		for ; i < len(data) && data[i] >= '0' && data[i] <= '9'; i++ {
			mantissa = mantissa*10 + uint32(data[i]-'0')
			if mantissa >= 1<<23 || i-fracStart >= len(float32Pow10)-1 {
				return 0, 0, false
			}
		}
		if fraction = i - fracStart; fraction == 0 {
			return 0, 0, false // "1.": an error
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E' || data[i] == '.') {
		return 0, 0, false
	}
	f = float32(mantissa) / float32Pow10[fraction]
	if neg {
		f = -f
	}
	return f, i, true
}

// float64Pow10 are the powers of ten a float64 holds exactly.
var float64Pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// LongFloat reads the number at data[pos] if it has at most 19
// significant digits and a decimal exponent (its own and its fraction's)
// within ±44, and rounds it to float32 exactly as
// strconv.ParseFloat(s, 32) does, at a third of its cost: what the Python
// clients send, numpy's float32 values widened to float64 and written in
// 16-17 digits (0.30000001192092896), which ShortFloat declines.
//
// The digits make an exact uint64; at most three float64 operations (the
// conversion, and a multiplication or division by exact powers of ten)
// bring it within 4 float64 ulps of the number's value. Rounding to
// nearest is the same for every value between two float32 midpoints, so
// when no midpoint lies within 64 float64 ulps of that result (a midpoint
// is where the 29 bits a float32 drops are 1 followed by zeros), it rounds
// to the same float32 as the exact value: float32 of it is the answer.
// Otherwise (one number in millions), and outside float32's normal range,
// it reports !ok, for strconv to round; also for anything else it does
// not read (more digits, malformed text).
func LongFloat(data []byte, pos int) (f float32, end int, ok bool) {
	i := pos
	neg := i < len(data) && data[i] == '-'
	if neg {
		i++
	}
	var mantissa uint64
	significant, exp10 := 0, 0
	digit := func() bool { // one digit into the mantissa; false past 19 significant ones
		if mantissa != 0 || data[i] != '0' {
			if significant++; significant > 19 {
				return false
			}
		}
		mantissa = mantissa*10 + uint64(data[i]-'0')
		return true
	}
	intStart := i
	for ; i < len(data) && data[i] >= '0' && data[i] <= '9'; i++ {
		if !digit() {
			return 0, 0, false
		}
	}
	if i == intStart || (i-intStart > 1 && data[intStart] == '0') {
		return 0, 0, false // no digits, or a leading zero: an error
	}
	if i < len(data) && data[i] == '.' {
		i++
		fracStart := i
		for ; i < len(data) && data[i] >= '0' && data[i] <= '9'; i++ {
			if !digit() {
				return 0, 0, false
			}
			exp10--
		}
		if i == fracStart {
			return 0, 0, false // "1.": an error
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		expNeg := i < len(data) && data[i] == '-'
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		expStart, exp := i, 0
		for ; i < len(data) && data[i] >= '0' && data[i] <= '9'; i++ {
			if exp = exp*10 + int(data[i]-'0'); exp > 1000 {
				return 0, 0, false
			}
		}
		if i == expStart {
			return 0, 0, false // "1e": an error
		}
		if expNeg {
			exp = -exp
		}
		exp10 += exp
	}
	if mantissa == 0 {
		if neg {
			return float32(math.Copysign(0, -1)), i, true
		}
		return 0, i, true
	}
	x := float64(mantissa)
	switch {
	case exp10 >= 0 && exp10 <= 22:
		x *= float64Pow10[exp10]
	case exp10 < 0 && exp10 >= -22:
		x /= float64Pow10[-exp10]
	case exp10 > 22 && exp10 <= 44:
		x = x * 1e22 * float64Pow10[exp10-22]
	case exp10 < -22 && exp10 >= -44:
		x = x / 1e22 / float64Pow10[-exp10-22]
	default:
		return 0, 0, false
	}
	if x < 0x1p-125 || x >= 0x1p127 {
		return 0, 0, false // near float32's subnormals or its overflow
	}
	const dropped = 1 << 29 // the float64 fraction bits a float32 drops
	if low := math.Float64bits(x) & (dropped - 1); low > dropped/2-64 && low < dropped/2+64 {
		return 0, 0, false // near a midpoint
	}
	f = float32(x)
	if neg {
		f = -f
	}
	return f, i, true
}

// Float32 reads the number at data[pos] as strconv.ParseFloat(s, 32)
// rounds it; !ok when there is no number there or it is beyond float32's
// range.
func Float32(data []byte, pos int) (f float32, end int, ok bool) {
	if f, end, ok := ShortFloat(data, pos); ok {
		return f, end, true
	}
	if f, end, ok := LongFloat(data, pos); ok {
		return f, end, true
	}
	end, _, fault := Number(data, pos)
	if fault != OK {
		return 0, pos, false
	}
	text := data[pos:end]
	// The string aliases data only for the duration of the call.
	x, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), 32)
	if err != nil || math.IsInf(x, 0) {
		return 0, pos, false
	}
	return float32(x), end, true
}

// Float32s appends the numbers of data, a JSON list of numbers with
// optional whitespace around its elements and nothing else, to dst. !ok
// when data is anything else (another JSON value, a number beyond
// float32's range, trailing bytes): dst is then returned as given, and the
// caller's own reader says what is wrong.
func Float32s(dst []float32, data []byte) ([]float32, bool) {
	start := len(dst)
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return dst, false
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return dst, SkipSpace(data, i+1) == len(data)
	}
	for {
		f, end, ok := Float32(data, i)
		if !ok {
			return dst[:start], false
		}
		dst = append(dst, f)
		i = SkipSpace(data, end)
		if i >= len(data) {
			return dst[:start], false
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case ']':
			if SkipSpace(data, i+1) != len(data) {
				return dst[:start], false
			}
			return dst, true
		default:
			return dst[:start], false
		}
	}
}
