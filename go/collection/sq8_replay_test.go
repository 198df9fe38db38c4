package collection

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/hnsw"
)

// TestSQ8RangesSameAfterReplay: an SQ8 index trains its ranges on its first
// Add. Live, that was the first upsert record; replay merged many records
// into one Add, trained on all of them, and so returned other vectors (and
// other search results) after a crash than before it.
func TestSQ8RangesSameAfterReplay(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions()
	opts.Quantization = hnsw.QuantSQ8
	c, err := Create(dir, opts, Tuning{CheckpointBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	ids := []uint64{0, 1, 2, 3, 4, 5}
	for _, id := range ids {
		if err := c.Upsert(IntIDs([]uint64{id}), randomVectors(rng, 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	c.waitIndexed() // the codes, not the tail's floats
	_, _, live, err := c.Get(IntIDs(ids), true)
	if err != nil {
		t.Fatal(err)
	}
	c.abandon()
	c = mustOpen(t, dir, Tuning{})
	defer c.Close()
	c.waitIndexed()
	_, _, replayed, err := c.Get(IntIDs(ids), true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(live, replayed) {
		t.Fatalf("vectors before the crash %v, after replay %v", live, replayed)
	}
}
