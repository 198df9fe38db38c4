package collection

import (
	"math/rand/v2"
	"testing"
)

// TestQueriesFillKWhileANewPointIsOverwritten: a point new to the graph
// is written twice, and the builder may build its first version while the
// second waits in the tail. A query at the first version's vector then
// meets that stale version first in the graph; the answer must still hold
// k points (the tail once did not count such a version among those it
// hides, and the answer came back a point short).
func TestQueriesFillKWhileANewPointIsOverwritten(t *testing.T) {
	c := mustCreate(t, t.TempDir(), Tuning{CheckpointBytes: -1, Threads: 1})
	defer c.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	m := model{}
	const base = 2000
	upsertRandom(t, c, rng, m, idRange(base))
	c.waitIndexed()
	out, dists := make([]ID, 10), make([]float32, 10)
	short := 0
	for i := range 3000 {
		id := uint64(base + i)
		first := randomVectors(rng, 1)
		if err := c.Upsert(IntIDs([]uint64{id}), first, nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Upsert(IntIDs([]uint64{id}), randomVectors(rng, 1), nil); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := c.Query(first, 10, 16, nil, 1, out, dists); err != nil {
				t.Fatal(err)
			}
			for _, got := range out {
				if got == NoID {
					short++
					break
				}
			}
		}
	}
	if short > 0 {
		t.Fatalf("%d of 9,000 queries answered fewer than 10 of the %d points", short, base+3000)
	}
}
