package hnsw

import (
	"math/rand/v2"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// TestCopyOrderLocality compares the search cost of graphs rebuilt from
// a renumbered graph with 30 % of its keys removed, as a collection's
// merge rebuilds a segment: copied in insertion order and renumbered
// after (the merge before), copied in IDsBreadthFirst's order and not
// renumbered, copied in insertion order and not renumbered. With
// STRATA_COPYORDER=1 only (a measurement: CPU time of the same queries,
// alternating, medians of 5 rounds).
func TestCopyOrderLocality(t *testing.T) {
	if os.Getenv("STRATA_COPYORDER") == "" {
		t.Skip("set STRATA_COPYORDER=1 to measure")
	}
	const n, dim, chunk = 100000, 128, 8192
	rng := rand.New(rand.NewPCG(1, 1))
	blobs := synth.NewBlobs(rng, 100, dim, 0.25)
	cfg := Config{Dim: dim, Metric: metric.L2, Seed: 1}
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint64, 1000)
	for at := 0; at < n; at += 1000 {
		for i := range ids {
			ids[i] = uint64(at + i)
		}
		if err := src.Add(blobs.Draw(1000), ids, nil, 2); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := src.Renumber(0); err != nil {
		t.Fatal(err)
	}
	var gone []uint64
	for k := range uint64(n) {
		if rng.IntN(10) < 3 {
			gone = append(gone, k)
		}
	}
	if _, err := src.Remove(gone, false); err != nil {
		t.Fatal(err)
	}
	build := func(order []uint64, renumber bool) *Index {
		x, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Reserve(len(order)); err != nil {
			t.Fatal(err)
		}
		buf := make([]float32, chunk*dim)
		for at := 0; at < len(order); at += chunk {
			part := order[at:min(at+chunk, len(order))]
			if err := src.GetVectors(part, buf[:len(part)*dim]); err != nil {
				t.Fatal(err)
			}
			if err := x.AddStored(buf[:len(part)*dim], part, 2); err != nil {
				t.Fatal(err)
			}
		}
		if renumber {
			if _, err := x.Renumber(0); err != nil {
				t.Fatal(err)
			}
		}
		return x
	}
	inserted, err := src.IDs()
	if err != nil {
		t.Fatal(err)
	}
	bfs, err := src.IDsBreadthFirst()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(slices.Sorted(slices.Values(bfs)), slices.Sorted(slices.Values(inserted))) {
		t.Fatal("IDsBreadthFirst and IDs list different keys")
	}
	names := []string{"insertion order + renumber", "breadth-first, no renumber", "insertion order, no renumber"}
	graphs := []*Index{build(inserted, true), build(bfs, false), build(inserted, false)}
	queries := blobs.Draw(2000)
	out, outD := make([]int64, 10), make([]float32, 10)
	cpu := func() float64 {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	per := make([][]float64, len(graphs))
	for range 5 {
		for i, x := range graphs {
			c0 := cpu()
			for q := range 2000 {
				if _, err := x.SearchFiltered(queries[q*dim:(q+1)*dim], 10, 0, 1, nil, out, outD); err != nil {
					t.Fatal(err)
				}
			}
			per[i] = append(per[i], (cpu()-c0)/2000*1e6)
		}
	}
	for i, p := range per {
		slices.Sort(p)
		t.Logf("%s: %.1f us CPU per query (median of 5; all %v)", names[i], p[2], p)
	}
}
