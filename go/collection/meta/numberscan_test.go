package meta

import (
	"math"
	"strconv"
	"testing"
)

// legacyNumber is the number scan decode.go had before it read numbers
// with jsonnum.Number, kept as the reference of FuzzNumberScanAsBefore.
// number reads a JSON number as float64. Integers of up to 15 digits are
// converted directly (exactly); anything else goes through strconv, which
// rounds correctly. A number too large for float64 is an error rather than
// an infinity.
func (d *decoder) legacyNumber() (float64, error) {
	data := d.data
	start := d.pos
	i := start
	neg := false
	if data[i] == '-' {
		neg = true
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
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case digits() == 0:
		d.pos = i
		return 0, d.syntaxErrorf("invalid number, expected a digit")
	}
	intEnd := i
	simple := true
	if i < len(data) && data[i] == '.' {
		i++
		simple = false
		if digits() == 0 {
			d.pos = i
			return 0, d.syntaxErrorf("invalid number, expected a digit after '.'")
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		simple = false
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if digits() == 0 {
			d.pos = i
			return 0, d.syntaxErrorf("invalid number, expected a digit in the exponent")
		}
	}
	d.pos = i
	if simple && d.exact && intEnd-intStart > 15 && !exactInteger(data[intStart:intEnd]) {
		d.pos = start
		return 0, d.syntaxErrorf("integer %s is beyond ±2^53 (%d), where a float64 number cannot hold every integer: send it as a string, or as a float (%s.0)",
			data[start:i], maxExactInteger, data[start:i])
	}
	if simple && intEnd-intStart <= 15 {
		var n int64
		for _, c := range data[intStart:intEnd] {
			n = n*10 + int64(c-'0')
		}
		f := float64(n)
		if neg {
			f = -f
		}
		return f, nil
	}
	f, err := strconv.ParseFloat(string(data[start:i]), 64)
	if err != nil && !math.IsInf(f, 0) {
		d.pos = start
		return 0, d.syntaxErrorf("invalid number %q", data[start:i])
	}
	if math.IsInf(f, 0) {
		d.pos = start
		return 0, d.syntaxErrorf("number %s is out of the float64 range", data[start:i])
	}
	return f, nil
}

// FuzzNumberScanAsBefore guards the move of decode.go's number scan onto
// jsonnum.Number (the one JSON number scanner): for any text, the decoder
// reads the same float64 (bit for bit), stops at the same offset and
// fails with the same message as the scan it replaced, exact or not.
func FuzzNumberScanAsBefore(f *testing.F) {
	for _, s := range []string{"0", "-0", "01", "-01", "00.5", "1.", "-1.x", "1e", "1E+", "1e-", "1.5e-3",
		"-", "-a", "0.0e0", "12345678901234567", "-9007199254740993", "9007199254740992", "123456789012345",
		"1234567890123456", "123456789012345.5", "1e400", "-1e400", "4.9e-325", "7,", "3]", "0x1F", "1.0e+00012"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || (data[0] != '-' && (data[0] < '0' || data[0] > '9')) {
			return // value() calls number only there
		}
		for _, exact := range []bool{false, true} {
			now, before := &decoder{data: data, exact: exact}, &decoder{data: data, exact: exact}
			got, gotErr := now.number()
			want, wantErr := before.legacyNumber()
			if math.Float64bits(got) != math.Float64bits(want) || now.pos != before.pos ||
				(gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("%q exact %v: %v at %d (%v), before %v at %d (%v)", data, exact,
					got, now.pos, gotErr, want, before.pos, wantErr)
			}
		}
	})
}
