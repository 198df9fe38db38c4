package meta

import (
	"math"
	"testing"
)

// TestNumberScanAsBefore guards the move of decode.go's number scan onto
// jsonnum.Number (the one JSON number scanner): for each text the decoder
// reads the same float64 (bit for bit), stops at the same offset and
// fails with the same message as the scan it replaced. The table is that
// old scan's answers; before it was deleted, a fuzz target compared the
// two on 1.5 million inputs without a difference.
func TestNumberScanAsBefore(t *testing.T) {
	for _, tc := range []struct {
		text  string
		exact bool
		bits  uint64
		pos   int
		err   string
	}{
		{"0", false, 0x0, 1, ""},
		{"0", true, 0x0, 1, ""},
		{"-0", false, 0x8000000000000000, 2, ""},
		{"-0", true, 0x8000000000000000, 2, ""},
		{"01", false, 0x0, 1, ""},
		{"01", true, 0x0, 1, ""},
		{"-01", false, 0x8000000000000000, 2, ""},
		{"-01", true, 0x8000000000000000, 2, ""},
		{"00.5", false, 0x0, 1, ""},
		{"00.5", true, 0x0, 1, ""},
		{"1.", false, 0x0, 2, "offset 2: invalid number, expected a digit after '.'"},
		{"1.", true, 0x0, 2, "offset 2: invalid number, expected a digit after '.'"},
		{"-1.x", false, 0x0, 3, "offset 3: invalid number, expected a digit after '.'"},
		{"-1.x", true, 0x0, 3, "offset 3: invalid number, expected a digit after '.'"},
		{"1e", false, 0x0, 2, "offset 2: invalid number, expected a digit in the exponent"},
		{"1e", true, 0x0, 2, "offset 2: invalid number, expected a digit in the exponent"},
		{"1E+", false, 0x0, 3, "offset 3: invalid number, expected a digit in the exponent"},
		{"1E+", true, 0x0, 3, "offset 3: invalid number, expected a digit in the exponent"},
		{"1e-", false, 0x0, 3, "offset 3: invalid number, expected a digit in the exponent"},
		{"1e-", true, 0x0, 3, "offset 3: invalid number, expected a digit in the exponent"},
		{"1.5e-3", false, 0x3f589374bc6a7efa, 6, ""},
		{"1.5e-3", true, 0x3f589374bc6a7efa, 6, ""},
		{"-", false, 0x0, 1, "offset 1: invalid number, expected a digit"},
		{"-", true, 0x0, 1, "offset 1: invalid number, expected a digit"},
		{"-a", false, 0x0, 1, "offset 1: invalid number, expected a digit"},
		{"-a", true, 0x0, 1, "offset 1: invalid number, expected a digit"},
		{"0.0e0", false, 0x0, 5, ""},
		{"0.0e0", true, 0x0, 5, ""},
		{"12345678901234567", false, 0x4345ee2a2eb5a5c4, 17, ""},
		{"12345678901234567", true, 0x0, 0, "offset 0: integer 12345678901234567 is beyond ±2^53 (9007199254740992), where a float64 number cannot hold every integer: send it as a string, or as a float (12345678901234567.0)"},
		{"-9007199254740993", false, 0xc340000000000000, 17, ""},
		{"-9007199254740993", true, 0x0, 0, "offset 0: integer -9007199254740993 is beyond ±2^53 (9007199254740992), where a float64 number cannot hold every integer: send it as a string, or as a float (-9007199254740993.0)"},
		{"9007199254740992", false, 0x4340000000000000, 16, ""},
		{"9007199254740992", true, 0x4340000000000000, 16, ""},
		{"123456789012345", false, 0x42dc12218377de40, 15, ""},
		{"123456789012345", true, 0x42dc12218377de40, 15, ""},
		{"1234567890123456", false, 0x43118b54f22aeb00, 16, ""},
		{"1234567890123456", true, 0x43118b54f22aeb00, 16, ""},
		{"123456789012345.5", false, 0x42dc12218377de60, 17, ""},
		{"123456789012345.5", true, 0x42dc12218377de60, 17, ""},
		{"1e400", false, 0x0, 0, "offset 0: number 1e400 is out of the float64 range"},
		{"1e400", true, 0x0, 0, "offset 0: number 1e400 is out of the float64 range"},
		{"-1e400", false, 0x0, 0, "offset 0: number -1e400 is out of the float64 range"},
		{"-1e400", true, 0x0, 0, "offset 0: number -1e400 is out of the float64 range"},
		{"4.9e-325", false, 0x0, 8, ""},
		{"4.9e-325", true, 0x0, 8, ""},
		{"7,", false, 0x401c000000000000, 1, ""},
		{"7,", true, 0x401c000000000000, 1, ""},
		{"3]", false, 0x4008000000000000, 1, ""},
		{"3]", true, 0x4008000000000000, 1, ""},
		{"0x1F", false, 0x0, 1, ""},
		{"0x1F", true, 0x0, 1, ""},
		{"1.0e+00012", false, 0x426d1a94a2000000, 10, ""},
		{"1.0e+00012", true, 0x426d1a94a2000000, 10, ""},
	} {
		d := &decoder{data: []byte(tc.text), exact: tc.exact}
		v, err := d.number()
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if math.Float64bits(v) != tc.bits || d.pos != tc.pos || msg != tc.err {
			t.Errorf("%q exact %v: %v (%#x) at %d, %q; before %#x at %d, %q",
				tc.text, tc.exact, v, math.Float64bits(v), d.pos, msg, tc.bits, tc.pos, tc.err)
		}
	}
}
