package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHalfToFloatMatchesTheFormat guards the float16 reading of --data:
// a wrong exponent bias would scale every vector.
func TestHalfToFloatMatchesTheFormat(t *testing.T) {
	for h, want := range map[uint16]float32{
		0x3c00: 1, 0xc000: -2, 0x3555: 0.33325195, 0x7bff: 65504, 0x0001: 5.9604645e-8,
		0x0000: 0, 0x8000: float32(math.Copysign(0, -1)), 0x7c00: float32(math.Inf(1)),
	} {
		if got := halfToFloat(h); got != want || math.Signbit(float64(got)) != math.Signbit(float64(want)) {
			t.Errorf("halfToFloat(%#04x) = %v, want %v", h, got, want)
		}
	}
	if !math.IsNaN(float64(halfToFloat(0x7e00))) {
		t.Error("0x7e00 is a NaN")
	}
}

func writeNpy(t *testing.T, path, descr string, rows, cols int, data []byte) {
	t.Helper()
	header := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
		strings.Join([]string{itoa(rows), itoa(cols)}, ", ") + "), }"
	header += strings.Repeat(" ", 63-(10+len(header))%64) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	b = append(append(b, header...), data...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestLoadDatasetReadsTheSharedLayout guards --data on a 2 x 2 copy of
// the pypi-use512 layout, and its refusal of a shape that does not fit.
func TestLoadDatasetReadsTheSharedLayout(t *testing.T) {
	dir := t.TempDir()
	halves := func(hs ...uint16) []byte {
		b := make([]byte, 2*len(hs))
		for i, h := range hs {
			binary.LittleEndian.PutUint16(b[2*i:], h)
		}
		return b
	}
	writeNpy(t, filepath.Join(dir, "train.f16.npy"), "<f2", 2, 2, halves(0x3c00, 0, 0, 0xc000))
	writeNpy(t, filepath.Join(dir, "test.f16.npy"), "<f2", 1, 2, halves(0x3c00, 0x3c00))
	nb := make([]byte, 8)
	binary.LittleEndian.PutUint32(nb[4:], 1)
	writeNpy(t, filepath.Join(dir, "neighbors.npy"), "<i4", 1, 2, nb)
	d, err := loadDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.dim != 2 || d.trainRows != 2 || d.tests != 1 || d.neighborsPerRow != 2 ||
		d.train[3] != -2 || d.test[1] != 1 || d.neighbors[1] != 1 {
		t.Fatalf("read %+v", d)
	}
	writeNpy(t, filepath.Join(dir, "test.f16.npy"), "<f2", 1, 3, halves(0, 0, 0))
	if _, err := loadDataset(dir); err == nil {
		t.Fatal("queries of another dimension were accepted")
	}
}
