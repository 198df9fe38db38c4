package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
)

// file builds a version-1 .npy file of the given header dict and data.
func file(dict string, data []byte) []byte {
	h := []byte(dict)
	for (10+len(h)+1)%64 != 0 {
		h = append(h, ' ')
	}
	h = append(h, '\n')
	out := append([]byte(magic), 1, 0)
	out = binary.LittleEndian.AppendUint16(out, uint16(len(h)))
	return append(append(out, h...), data...)
}

func shapeDict(n, d int) string {
	return fmt.Sprintf("{'descr': '<f2', 'fortran_order': False, 'shape': (%d, %d), }", n, d)
}

func TestReadFloat16DecodesNumPysLayout(t *testing.T) {
	// 1.0, -2.0, 0.5, 65504 (largest half), smallest subnormal, +Inf
	halves := []uint16{0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001, 0x7c00}
	var data []byte
	for _, h := range halves {
		data = binary.LittleEndian.AppendUint16(data, h)
	}
	got, n, d, err := ReadFloat16(file(shapeDict(2, 3), data))
	if err != nil || n != 2 || d != 3 {
		t.Fatalf("ReadFloat16: n=%d d=%d err=%v", n, d, err)
	}
	want := []float32{1, -2, 0.5, 65504, 1.0 / (1 << 24), float32(math.Inf(1))}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("value %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func TestReadFloat16RefusesWhatItCannotRead(t *testing.T) {
	two := []byte{0, 0, 0, 0}
	for name, input := range map[string][]byte{
		"empty":           nil,
		"no magic":        []byte("not a numpy file at all"),
		"float32":         file("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }", two),
		"fortran order":   file("{'descr': '<f2', 'fortran_order': True, 'shape': (1, 2), }", two),
		"short data":      file(shapeDict(2, 2), two),
		"zero rows":       file(shapeDict(0, 2), nil),
		"overflow":        file(shapeDict(1<<62, 1<<62), two),
		"huge":            file(shapeDict(99999999999999999, 1), two),
		"truncated head":  append([]byte(magic), 1, 0, 0xff, 0xff),
		"unknown version": append([]byte(magic), 9, 0, 0, 0, 0, 0),
	} {
		if _, _, _, err := ReadFloat16(input); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: got %v, want ErrFormat", name, err)
		}
	}
}

func TestReadInt32DecodesNumPysLayoutAndRefusesOtherDtypes(t *testing.T) {
	var data []byte
	for _, v := range []int32{7, -1, 1 << 30, 0} {
		data = binary.LittleEndian.AppendUint32(data, uint32(v))
	}
	dict := "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }"
	got, n, d, err := ReadInt32(file(dict, data))
	if err != nil || n != 2 || d != 2 || got[0] != 7 || got[1] != -1 || got[2] != 1<<30 || got[3] != 0 {
		t.Fatalf("ReadInt32: %v n=%d d=%d err=%v", got, n, d, err)
	}
	// Each reader takes only its own dtype, though the header is valid.
	if _, _, _, err := ReadFloat16(file(dict, data)); !errors.Is(err, ErrFormat) {
		t.Errorf("ReadFloat16 of an int32 file: got %v, want ErrFormat", err)
	}
	if _, _, _, err := ReadInt32(file(shapeDict(2, 4), data)); !errors.Is(err, ErrFormat) {
		t.Errorf("ReadInt32 of a float16 file: got %v, want ErrFormat", err)
	}
	if _, _, _, err := ReadInt32(file("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", data)); !errors.Is(err, ErrFormat) {
		t.Errorf("ReadInt32 of short data: got %v, want ErrFormat", err)
	}
}

// The reader takes files from disk: no input may crash it or make it
// allocate more than the input's size suggests.
func FuzzReadFloat16(f *testing.F) {
	f.Add(file(shapeDict(1, 2), []byte{0, 0x3c, 0, 0xc0}))
	f.Add(file(shapeDict(1<<62, 4), nil))
	f.Add([]byte(magic + "\x02\x00\x10\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		values, n, d, err := ReadFloat16(data)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not match ErrFormat", err)
			}
			return
		}
		if len(values) != n*d || 2*len(values) > len(data) {
			t.Fatalf("%d values for shape (%d, %d) from %d bytes", len(values), n, d, len(data))
		}
	})
}
