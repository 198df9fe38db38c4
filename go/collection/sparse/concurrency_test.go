package sparse

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/strata-db/strata/go/vfs/memfs"
)

// TestSearchesRunDuringWrites prevents a data race or a torn read between
// searches and the writes a collection applies meanwhile (upserts that
// append to the store, deletes that compact it, Freeze for a checkpoint):
// run it with -race. Every batch gives all points the same vector, so a
// search that saw half a batch (one Upsert call is one write) would find
// hits with two different scores, or a score no batch gives.
func TestSearchesRunDuringWrites(t *testing.T) {
	x, _ := New(ModifierNone)
	const keys, batches = 200, 300
	g := gen{rng: rand.New(rand.NewPCG(10, 10)), vocab: 30, maxNNZ: 6}
	versions := make([]Vector, batches)
	for i := range versions {
		versions[i] = g.point()
	}
	q, _ := Normalize([]uint32{0, 7919, 2 * 7919, 3 * 7919}, []float32{1, 1, 1, 1})
	valid := map[float32]bool{}
	for _, v := range versions {
		s, _ := Dot(q, v)
		valid[s] = true
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				hits, _, err := x.Search(q, 20, nil)
				if err != nil {
					errs <- err.Error()
					return
				}
				for i, h := range hits {
					if !valid[h.Score] {
						errs <- "a score no batch gives"
						return
					}
					if i > 0 && (h.Score != hits[0].Score || h.Key < hits[i-1].Key) {
						errs <- "hits from two batches, or out of key order"
						return
					}
				}
			}
		}()
	}
	fs := memfs.New()
	all := make([]uint64, keys)
	for i := range all {
		all[i] = uint64(i)
	}
	for b := range batches {
		vs := make([]Vector, keys)
		for i := range vs {
			vs[i] = versions[b]
		}
		if err := x.Upsert(all, vs); err != nil {
			t.Fatal(err)
		}
		if b%50 == 0 {
			x.Delete(all[:keys/2])
			if err := x.Freeze().Write(fs, "snap"); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if err := x.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	hits, _, _ := x.Search(q, keys, nil)
	if s, _ := Dot(q, versions[batches-1]); len(hits) > 0 && !slices.ContainsFunc(hits, func(h Hit) bool { return h.Score == s }) {
		t.Fatal("the last batch is not what a search sees")
	}
}
