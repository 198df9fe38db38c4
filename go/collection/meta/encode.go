package meta

import (
	"math"
	"strconv"
)

// appendValue writes v as canonical compact JSON: no whitespace, object keys
// in byte order (they are stored sorted), numbers in the shortest form that
// parses back to the same float64, strings with only '"', '\\' and control
// characters escaped.
func appendValue(b []byte, v value) []byte {
	switch v.kind {
	case kindNull:
		return append(b, "null"...)
	case kindBool:
		if v.b {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case kindNumber:
		return appendNumber(b, v.num)
	case kindString:
		return appendString(b, v.str)
	case kindList:
		b = append(b, '[')
		for i, item := range v.list {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, item)
		}
		return append(b, ']')
	default:
		return appendFields(b, v.fields)
	}
}

func appendFields(b []byte, fields []field) []byte {
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, f.key)
		b = append(b, ':')
		b = appendValue(b, f.val)
	}
	return append(b, '}')
}

// appendNumber formats like encoding/json, shortest round-tripping digits
// in plain decimal or exponent form, except that the plain form stops at
// 2^53 instead of 1e21: a number beyond is written as a float (1.5e+18),
// never as integer digits that input parsing would refuse as inexact.
func appendNumber(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs > maxExactInteger) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// "1e-07" -> "1e-7", as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
