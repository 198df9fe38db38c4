package hnsw

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/metric"
	"github.com/strata-db/strata/go/vfs"
)

// TestKeysIndexTakesKeysAboveMaxIDAndOthersRefuseThem prevents a
// collection's string keys (2^63 and up) from being refused by its index,
// and an index made without Config.Keys (strata.Index's) from taking them,
// live and after a reload.
func TestKeysIndexTakesKeysAboveMaxIDAndOthersRefuseThem(t *testing.T) {
	vectors := []float32{0, 0, 1, 1}
	big := uint64(1<<63 + 5)
	plain, err := New(Config{Dim: 2, Metric: metric.L2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Add(vectors, []uint64{1, big}, nil, 1); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("plain index took key %d: %v", big, err)
	}
	keyed, err := New(Config{Dim: 2, Metric: metric.L2, Seed: 1, Keys: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := keyed.Add(vectors, []uint64{1, big}, nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := keyed.Add(vectors[:2], []uint64{batch.MaxKey + 1}, nil, 1); !errors.Is(err, batch.ErrInvalid) {
		t.Fatalf("key 2^64-1 (the bit pattern of -1) was taken: %v", err)
	}
	path := filepath.Join(t.TempDir(), "x.hnsw")
	if err := keyed.Save(vfs.Default, path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(vfs.Default, path, LoadOptions{}); err == nil {
		t.Fatal("a plain Load accepted a key above MaxID")
	}
	loaded, err := Load(vfs.Default, path, LoadOptions{Keys: true})
	if err != nil {
		t.Fatal(err)
	}
	ids, dists := make([]int64, 2), make([]float32, 2)
	if err := loaded.Search([]float32{1, 1}, 2, 10, 1, ids, dists); err != nil {
		t.Fatal(err)
	}
	if uint64(ids[0]) != big || ids[1] != 1 {
		t.Fatalf("search returned %v, want [%d 1]", ids, int64(big))
	}
}
