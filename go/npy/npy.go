// Package npy reads NumPy .npy files that hold a C-order, little-endian
// float16 or int32 matrix (the playground's pypi demo ships its vectors as
// float16; the shared data sets add int32 ground-truth neighbours).
//
// # Format (NumPy format versions 1, 2 and 3)
//
//	offset 0  "\x93NUMPY"            magic, 6 bytes
//	offset 6  major, minor           1 byte each
//	offset 8  header length H        uint16 LE (version 1) or uint32 LE (2, 3)
//	then      header, H bytes        a Python dict literal, e.g.
//	                                 {'descr': '<f2', 'fortran_order': False, 'shape': (n, d), }
//	then      data                   n·d values, row after row, LE: 2 bytes each ('<f2')
//	                                 or 4 bytes each ('<i4')
//
// Anything else (another dtype, Fortran order, a shape that is not two
// positive dimensions, data of the wrong length) is refused with an error
// matching ErrFormat; nothing is allocated before the lengths are checked
// against the input.
package npy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// ErrFormat marks input that is not a .npy file this package reads.
var ErrFormat = errors.New("npy: not a C-order float16 or int32 matrix .npy file")

const magic = "\x93NUMPY"

var header = regexp.MustCompile(`'descr':\s*'(<f2|<i4)',\s*'fortran_order':\s*False,\s*'shape':\s*\((\d+),\s*(\d+)\)`)

// ReadFloat16 decodes a '<f2' .npy file's bytes into float32 values,
// row-major, and the matrix's shape.
func ReadFloat16(data []byte) (values []float32, rows, cols int, err error) {
	body, rows, cols, err := matrix(data, "<f2", 2)
	if err != nil {
		return nil, 0, 0, err
	}
	values = make([]float32, rows*cols)
	for i := range values {
		values[i] = HalfToFloat(binary.LittleEndian.Uint16(body[2*i:]))
	}
	return values, rows, cols, nil
}

// ReadInt32 decodes a '<i4' .npy file's bytes, row-major, and the
// matrix's shape.
func ReadInt32(data []byte) (values []int32, rows, cols int, err error) {
	body, rows, cols, err := matrix(data, "<i4", 4)
	if err != nil {
		return nil, 0, 0, err
	}
	values = make([]int32, rows*cols)
	for i := range values {
		values[i] = int32(binary.LittleEndian.Uint32(body[4*i:]))
	}
	return values, rows, cols, nil
}

// matrix checks the header and returns the data of a descr matrix whose
// values are size bytes each.
func matrix(data []byte, descr string, size int) (body []byte, rows, cols int, err error) {
	if len(data) < 10 || !bytes.Equal(data[:6], []byte(magic)) {
		return nil, 0, 0, fmt.Errorf("%w: no .npy magic", ErrFormat)
	}
	var headerLen, start int
	switch {
	case data[6] == 1:
		headerLen, start = int(binary.LittleEndian.Uint16(data[8:10])), 10
	case (data[6] == 2 || data[6] == 3) && len(data) >= 12:
		headerLen, start = int(binary.LittleEndian.Uint32(data[8:12])), 12
	default:
		return nil, 0, 0, fmt.Errorf("%w: format version %d", ErrFormat, data[6])
	}
	if headerLen > len(data)-start {
		return nil, 0, 0, fmt.Errorf("%w: truncated header", ErrFormat)
	}
	m := header.FindSubmatch(data[start : start+headerLen])
	if m == nil {
		return nil, 0, 0, fmt.Errorf("%w: the header describes another array", ErrFormat)
	}
	if string(m[1]) != descr {
		return nil, 0, 0, fmt.Errorf("%w: dtype %s, want %s", ErrFormat, m[1], descr)
	}
	body = data[start+headerLen:]
	rows, err1 := strconv.Atoi(string(m[2]))
	cols, err2 := strconv.Atoi(string(m[3]))
	// Checked against the data before multiplying, so that no shape can
	// overflow n·d·size or ask for more memory than the file holds.
	if err1 != nil || err2 != nil || rows <= 0 || cols <= 0 || cols > len(body)/size ||
		rows > len(body)/size/cols || len(body) != size*rows*cols {
		return nil, 0, 0, fmt.Errorf("%w: %d bytes of data for shape (%s, %s)", ErrFormat, len(body), m[2], m[3])
	}
	return body, rows, cols, nil
}

// HalfToFloat converts an IEEE 754 binary16 value, exactly.
func HalfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: value = frac · 2^-24
		f := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}
