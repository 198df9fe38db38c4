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

// Float32 reads the number at data[pos] as strconv.ParseFloat(s, 32)
// rounds it; !ok when there is no number there or it is beyond float32's
// range.
func Float32(data []byte, pos int) (f float32, end int, ok bool) {
	if f, end, ok := ShortFloat(data, pos); ok {
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
