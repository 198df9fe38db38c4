package synth

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-db/strata/go/npy"
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
		return nil, fmt.Errorf("synth: %s: queries have dim %d, train %d", name, qdim, dim)
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

// ReadNpyF16 reads a float16 [rows, cols] .npy file into float32.
func ReadNpyF16(path string) ([]float32, int, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("synth: %w", err)
	}
	values, rows, cols, err := npy.ReadFloat16(data)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("synth: %s: %w", path, err)
	}
	return values, rows, cols, nil
}

// ReadNpyI32 reads an int32 [rows, cols] .npy file.
func ReadNpyI32(path string) ([]int32, int, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("synth: %w", err)
	}
	values, rows, cols, err := npy.ReadInt32(data)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("synth: %s: %w", path, err)
	}
	return values, rows, cols, nil
}
