package hnsw

import (
	"math/rand/v2"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/metric"
)

// TestReservedIndexGrowsNoArray: an index reserved for the nodes a merge
// will add takes them in batches without a growth (each would copy every
// array), and a smaller Reserve after changes nothing.
func TestReservedIndexGrowsNoArray(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim, n, batch = 8, 3000, 100
	x, err := New(Config{Dim: dim, Metric: metric.L2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Reserve(n); err != nil {
		t.Fatal(err)
	}
	capacity := x.graph.Load().capacity()
	if capacity < n {
		t.Fatalf("reserved %d nodes, capacity %d", n, capacity)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	vecs := make([]float32, batch*dim)
	for at := 0; at < n; at += batch {
		for i := range vecs {
			vecs[i] = rng.Float32()
		}
		ids := make([]uint64, batch)
		for i := range ids {
			ids[i] = uint64(at + i)
		}
		if err := x.Add(vecs, ids, nil, 1); err != nil {
			t.Fatal(err)
		}
		if got := x.graph.Load().capacity(); got != capacity {
			t.Fatalf("after %d nodes the capacity is %d, reserved %d", at+batch, got, capacity)
		}
	}
	if err := x.Reserve(10); err != nil || x.graph.Load().capacity() != capacity {
		t.Fatalf("a smaller Reserve: capacity %d (was %d), err %v", x.graph.Load().capacity(), capacity, err)
	}
	if x.Len() != n {
		t.Fatalf("%d live, want %d", x.Len(), n)
	}
}
