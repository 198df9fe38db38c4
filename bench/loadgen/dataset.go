package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// dataset is real vectors to load and query instead of generated ones
// (--data): the layout of ../shared/data/pypi-use512, train.f16.npy
// (n × dim float16), test.f16.npy (queries) and neighbors.npy (queries ×
// 100 int32, the exact nearest train rows by cosine).
type dataset struct {
	dim              int
	train, test      []float32
	neighbors        []int32
	neighborsPerRow  int
	trainRows, tests int
}

func loadDataset(dir string) (*dataset, error) {
	train, tn, dim, err := readNpy(filepath.Join(dir, "train.f16.npy"), "<f2")
	if err != nil {
		return nil, err
	}
	test, qn, qdim, err := readNpy(filepath.Join(dir, "test.f16.npy"), "<f2")
	if err != nil {
		return nil, err
	}
	nb, nn, width, err := readNpy(filepath.Join(dir, "neighbors.npy"), "<i4")
	if err != nil {
		return nil, err
	}
	if qdim != dim || nn != qn {
		return nil, fmt.Errorf("%s: test is %d x %d and neighbors %d rows for train of dim %d", dir, qn, qdim, nn, dim)
	}
	d := &dataset{dim: dim, trainRows: tn, tests: qn, neighborsPerRow: width}
	d.train, d.test = halves(train), halves(test)
	d.neighbors = make([]int32, len(nb)/4)
	for i := range d.neighbors {
		d.neighbors[i] = int32(binary.LittleEndian.Uint32(nb[4*i:]))
	}
	return d, nil
}

var npyShape = regexp.MustCompile(`'shape':\s*\((\d+),\s*(\d+)\)`)

// readNpy reads a 2-d little-endian C-order .npy file of dtype descr: its
// raw data, rows and columns.
func readNpy(path, descr string) ([]byte, int, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(b) < 10 || !bytes.HasPrefix(b, []byte("\x93NUMPY")) {
		return nil, 0, 0, fmt.Errorf("%s: not a .npy file", path)
	}
	headerLen, start := int(binary.LittleEndian.Uint16(b[8:])), 10
	if b[6] >= 2 {
		headerLen, start = int(binary.LittleEndian.Uint32(b[8:])), 12
	}
	if start+headerLen > len(b) {
		return nil, 0, 0, fmt.Errorf("%s: header past the end", path)
	}
	header := string(b[start : start+headerLen])
	m := npyShape.FindStringSubmatch(header)
	if m == nil || !bytes.Contains([]byte(header), []byte("'descr': '"+descr+"'")) ||
		bytes.Contains([]byte(header), []byte("'fortran_order': True")) {
		return nil, 0, 0, fmt.Errorf("%s: want a 2-d C-order %s array, header %q", path, descr, header)
	}
	rows, _ := strconv.Atoi(m[1])
	cols, _ := strconv.Atoi(m[2])
	size := 2
	if descr == "<i4" {
		size = 4
	}
	data := b[start+headerLen:]
	if len(data) != rows*cols*size {
		return nil, 0, 0, fmt.Errorf("%s: %d bytes of data for %d x %d", path, len(data), rows, cols)
	}
	return data, rows, cols, nil
}

// halves converts little-endian IEEE 754 binary16 values to float32.
func halves(b []byte) []float32 {
	out := make([]float32, len(b)/2)
	for i := range out {
		out[i] = halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return out
}

func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac · 2^-24
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}

// measureRecall sends each query once (the first ds.tests of them) and
// answers the mean fraction of the exact k nearest among the k ids
// returned.
func measureRecall(rt roundTripper, queries []request, ds *dataset, k int) float64 {
	if c, ok := rt.(*rawConn); ok {
		defer c.close()
	}
	total, count := 0.0, min(len(queries), ds.tests)
	for i := range count {
		status, body, err := rt.roundTrip(&queries[i])
		if err == nil {
			err = answerError(status, body, `{"results":[{"id":`)
		}
		check(err)
		var answer struct {
			Results []struct {
				ID int64 `json:"id"`
			} `json:"results"`
		}
		check(json.Unmarshal(body, &answer))
		truth := make(map[int64]bool, k)
		for _, id := range ds.neighbors[i*ds.neighborsPerRow : i*ds.neighborsPerRow+k] {
			truth[int64(id)] = true
		}
		hits := 0
		for _, r := range answer.Results {
			if truth[r.ID] {
				hits++
			}
		}
		total += float64(hits) / float64(k)
	}
	return total / float64(count)
}
