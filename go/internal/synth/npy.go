package synth

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// DataDir is where the shared real data sets live (see the data README):
// $STRATA_DATA_DIR, else /work/shared/data. Tests that need a set skip when
// it is absent; the files are never copied into the repository.
func DataDir() string {
	if d := os.Getenv("STRATA_DATA_DIR"); d != "" {
		return d
	}
	return "/work/shared/data"
}

// RealSet is a data set of the shared data directory: train rows, held-out
// query rows and their exact top-100 train ids.
type RealSet struct {
	Dim       int
	Train     []float32
	Queries   []float32
	Neighbors [][]uint64
}

// LoadRealSet loads name (e.g. "pypi-use512") from DataDir: train.f16.npy,
// test.f16.npy and neighbors.npy. maxTrain > 0 keeps only the first maxTrain
// train rows (the neighbours are then not valid for it and are dropped).
func LoadRealSet(name string, maxTrain int) (*RealSet, error) {
	dir := filepath.Join(DataDir(), name)
	train, n, dim, err := ReadNpyF16(filepath.Join(dir, "train.f16.npy"))
	if err != nil {
		return nil, err
	}
	queries, _, qdim, err := ReadNpyF16(filepath.Join(dir, "test.f16.npy"))
	if err != nil {
		return nil, err
	}
	if qdim != dim {
		return nil, fmt.Errorf("testdata: %s: queries have dim %d, train %d", name, qdim, dim)
	}
	set := &RealSet{Dim: dim, Train: train, Queries: queries}
	if maxTrain > 0 && maxTrain < n {
		set.Train = train[:maxTrain*dim]
		return set, nil
	}
	ids, _, k, err := ReadNpyI32(filepath.Join(dir, "neighbors.npy"))
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(ids)/k; i++ {
		row := make([]uint64, k)
		for j := range row {
			row[j] = uint64(ids[i*k+j])
		}
		set.Neighbors = append(set.Neighbors, row)
	}
	return set, nil
}

var npyShape = regexp.MustCompile(`'descr':\s*'([<|][a-z]\d)',\s*'fortran_order':\s*False,\s*'shape':\s*\((\d+),\s*(\d+)\)`)

// readNpy returns the body of a C-order 2-d .npy file of the given dtype.
func readNpy(path, descr string, size int) (body []byte, rows, cols int, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("testdata: %w", err)
	}
	if len(data) < 12 || !bytes.Equal(data[:6], []byte("\x93NUMPY")) {
		return nil, 0, 0, fmt.Errorf("testdata: %s is not a .npy file", path)
	}
	headerLen, start := int(binary.LittleEndian.Uint16(data[8:10])), 10
	if data[6] != 1 {
		headerLen, start = int(binary.LittleEndian.Uint32(data[8:12])), 12
	}
	if start+headerLen > len(data) {
		return nil, 0, 0, fmt.Errorf("testdata: %s: truncated header", path)
	}
	m := npyShape.FindSubmatch(data[start : start+headerLen])
	if m == nil || string(m[1]) != descr {
		return nil, 0, 0, fmt.Errorf("testdata: %s is not a C-order %s matrix", path, descr)
	}
	rows, _ = strconv.Atoi(string(m[2]))
	cols, _ = strconv.Atoi(string(m[3]))
	body = data[start+headerLen:]
	if len(body) != size*rows*cols {
		return nil, 0, 0, fmt.Errorf("testdata: %s: %d bytes of data for shape (%d, %d)", path, len(body), rows, cols)
	}
	return body, rows, cols, nil
}

// ReadNpyF16 reads a float16 [rows, cols] .npy file into float32.
func ReadNpyF16(path string) ([]float32, int, int, error) {
	body, rows, cols, err := readNpy(path, "<f2", 2)
	if err != nil {
		return nil, 0, 0, err
	}
	out := make([]float32, rows*cols)
	for i := range out {
		out[i] = halfToFloat(binary.LittleEndian.Uint16(body[2*i:]))
	}
	return out, rows, cols, nil
}

// ReadNpyI32 reads an int32 [rows, cols] .npy file.
func ReadNpyI32(path string) ([]int32, int, int, error) {
	body, rows, cols, err := readNpy(path, "<i4", 4)
	if err != nil {
		return nil, 0, 0, err
	}
	out := make([]int32, rows*cols)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(body[4*i:]))
	}
	return out, rows, cols, nil
}

// halfToFloat converts an IEEE 754 binary16 value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac · 2^-24
		f := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}
