package hnsw

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/vfs"
)

// reorderAt makes batches of at least n nodes renumber x's graph, and
// Compact and Renumber renumber graphs of at least n nodes (0: never).
func reorderAt(x *Index, n int) {
	x.build.reorderMinNodes = n
	if n == 0 {
		x.build.reorderMinNodes = -1
	}
}

// TestReorderChangesNothingACallerSees guards the renumbering after a
// large Add and in Compact: against the same index built without it, every
// search answers the same ids and distances, IDs keeps insertion order, and
// that still holds after a save/load round trip, more adds, upserts,
// removals and a compaction.
func TestReorderChangesNothingACallerSees(t *testing.T) {
	racetest.AnswersOnly(t)
	for name, cfg := range persistConfigs {
		t.Run(name, func(t *testing.T) {
			const n = 1500
			data := synth.Clustered(n, cfg.Dim, 20, 0.2, 41)
			queries := synth.Clustered(100, cfg.Dim, 20, 0.2, 42)
			ids := make([]uint64, n)
			for i := range ids {
				ids[i] = uint64(n-i) * 3 // insertion order differs from id order
			}
			build := func(minNodes int) *Index {
				x := mustNew(t, cfg)
				reorderAt(x, minNodes)
				if err := x.Add(data, ids, nil, 1); err != nil {
					t.Fatal(err)
				}
				return x
			}
			plain, renumbered := build(0), build(1000)
			if renumbered.graph.Load().rank == nil || plain.graph.Load().rank != nil {
				t.Fatal("the large batch was not renumbered (or the small threshold leaked)")
			}
			// SQ8 distances tie often, and ties break by node number: once
			// later inserts have run on both numberings the two graphs may
			// differ, so from then on SQ8 answers need only agree closely.
			exact := true
			same := func(step string, a, b *Index) {
				t.Helper()
				for _, ef := range []int{10, 64} {
					ia, da := search(t, a, queries, 10, ef, 1)
					ib, db := search(t, b, queries, 10, ef, 1)
					if exact && (!slices.Equal(ia, ib) || !slices.Equal(da, db)) {
						t.Fatalf("%s, ef=%d: renumbered index answers differently", step, ef)
					}
					if common := overlap(ia, ib, 10); common < 0.95 {
						t.Fatalf("%s, ef=%d: only %.3f of the answers agree", step, ef, common)
					}
				}
				wa, errA := a.IDs()
				wb, errB := b.IDs()
				if errA != nil || errB != nil || !slices.Equal(wa, wb) {
					t.Fatalf("%s: IDs differ (%v, %v)", step, errA, errB)
				}
				// A few SQ8 graphs strand a node whatever the numbering;
				// renumbering must not add to that.
				if a.CheckIntegrity() == nil {
					if err := b.CheckIntegrity(); err != nil {
						t.Fatalf("%s: %v", step, err)
					}
				}
			}
			same("after add", plain, renumbered)

			path := filepath.Join(t.TempDir(), "r.idx")
			if err := renumbered.Save(vfs.Default, path); err != nil {
				t.Fatal(err)
			}
			loaded, err := Load(vfs.Default, path, LoadOptions{MmapVectors: true})
			if err != nil {
				t.Fatal(err)
			}
			defer loaded.Close()
			same("after save and load", plain, loaded)

			for _, x := range []*Index{plain, loaded} {
				reorderAt(x, 1000)
			}
			for _, x := range []*Index{plain, loaded} {
				if err := x.Add(data[:50*cfg.Dim], []uint64{1, 2, 3, 6, 9}, nil, 1); err == nil {
					t.Fatal("mismatched ids accepted")
				}
				if err := x.Add(data[:5*cfg.Dim], []uint64{7, 3, 6, 9000, 9001}, nil, 1); err != nil {
					t.Fatal(err)
				}
				if _, err := x.Remove([]uint64{30, 60, 90}, false); err != nil {
					t.Fatal(err)
				}
			}
			exact = cfg.Quantization == QuantNone
			same("after small add, upsert and remove", plain, loaded)
			for _, x := range []*Index{plain, loaded} {
				if err := x.Compact(1); err != nil {
					t.Fatal(err)
				}
			}
			same("after compact", plain, loaded)
		})
	}
}

// TestBFSOrderIsAPermutationStartingAtTheEntry guards the renumbering's
// input: every node exactly once, the entry point first.
func TestBFSOrderIsAPermutationStartingAtTheEntry(t *testing.T) {
	x := mustNew(t, Config{Dim: 8, M: 4, Seed: 3})
	reorderAt(x, 0)
	if err := x.Add(synth.Clustered(700, 8, 10, 0.2, 5), nil, nil, 2); err != nil {
		t.Fatal(err)
	}
	g := x.graph.Load()
	order := g.bfsOrder()
	if err := checkPermutation(order); err != nil || len(order) != g.count {
		t.Fatalf("order of %d nodes: %v", len(order), err)
	}
	if _, ep := unpackEntry(g.entry.Load()); order[0] != ep {
		t.Fatalf("order starts at %d, entry is %d", order[0], ep)
	}
}

// overlap is the fraction of each row of a (k ids per row) also in b's row.
func overlap(a, b []int64, k int) float64 {
	common := 0
	for r := 0; r < len(a); r += k {
		for _, id := range a[r : r+k] {
			if slices.Contains(b[r:r+k], id) {
				common++
			}
		}
	}
	return float64(common) / float64(len(a))
}

// TestRenumberChangesNothingACallerSees guards Renumber, the renumbering
// of an index grown by small batches: it must leave every answer, the
// insertion order IDs reports and the graph's integrity as they were,
// including for the adds, upserts and removals that follow it, while
// searches run during it.
func TestRenumberChangesNothingACallerSees(t *testing.T) {
	const n, dim = 1500, 16
	data := synth.Clustered(n, dim, 20, 0.2, 43)
	queries := synth.Clustered(100, dim, 20, 0.2, 44)
	build := func() *Index {
		x := mustNew(t, Config{Dim: dim, Seed: 5})
		reorderAt(x, 1000)
		for at := 0; at < n; at += 100 { // batches too small to renumber
			ids := make([]uint64, 100)
			for i := range ids {
				ids[i] = uint64(n - at - i)
			}
			if err := x.Add(data[at*dim:(at+100)*dim], ids, nil, 1); err != nil {
				t.Fatal(err)
			}
		}
		return x
	}
	plain, renumbered := build(), build()
	if renumbered.graph.Load().rank != nil {
		t.Fatal("a small batch renumbered the graph")
	}
	stop := make(chan struct{})
	searched := make(chan error)
	go func() {
		ids, dists := make([]int64, 10), make([]float32, 10)
		for {
			select {
			case <-stop:
				searched <- nil
				return
			default:
			}
			if _, err := renumbered.SearchFiltered(queries[:dim], 10, 32, 1, nil, ids, dists); err != nil {
				searched <- err
				return
			}
		}
	}()
	ok, err := renumbered.Renumber(0)
	close(stop)
	if serr := <-searched; serr != nil {
		t.Fatal(serr)
	}
	if err != nil || !ok {
		t.Fatalf("Renumber: %v, %v", ok, err)
	}
	if renumbered.graph.Load().rank == nil {
		t.Fatal("Renumber left the numbering as it was")
	}
	same := func(step string) {
		t.Helper()
		for _, ef := range []int{10, 64} {
			ia, da := search(t, plain, queries, 10, ef, 1)
			ib, db := search(t, renumbered, queries, 10, ef, 1)
			if !slices.Equal(ia, ib) || !slices.Equal(da, db) {
				t.Fatalf("%s, ef=%d: the renumbered index answers differently", step, ef)
			}
		}
		wa, errA := plain.IDs()
		wb, errB := renumbered.IDs()
		if errA != nil || errB != nil || !slices.Equal(wa, wb) {
			t.Fatalf("%s: IDs differ (%v, %v)", step, errA, errB)
		}
		if err := renumbered.CheckIntegrity(); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	same("after Renumber")
	// New vectors: a copy of a stored one would tie with it, and ties
	// break by arrival order, which renumbering is free to change.
	more := synth.Clustered(5, dim, 20, 0.2, 45)
	for _, x := range []*Index{plain, renumbered} {
		if err := x.Add(more, []uint64{7, 3, 6, 9000, 9001}, nil, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Remove([]uint64{30, 60, 90}, false); err != nil {
			t.Fatal(err)
		}
	}
	same("after an add, upserts and removals")

	// Growth: the last renumbering was at 1,500 live ids (1,502 now).
	if ok, err := renumbered.Renumber(1.5); ok || err != nil {
		t.Fatalf("Renumber(1.5) without growth: %v, %v", ok, err)
	}
	// A large Add renumbers by itself and counts as the last renumbering:
	// the next Renumber(1.5) must not copy the graph again.
	big := synth.Clustered(2000, dim, 20, 0.2, 46)
	if err := plain.Add(big, nil, nil, 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := plain.Renumber(1.5); ok || err != nil {
		t.Fatalf("Renumber(1.5) right after a renumbering Add: %v, %v", ok, err)
	}
	// 3,502 -> 5,502 live, 1.57x; too small a share for Add to renumber.
	if err := plain.Add(big, nil, nil, 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := plain.Renumber(1.5); !ok || err != nil {
		t.Fatalf("Renumber(1.5) after growing 1.5x: %v, %v", ok, err)
	}
	if err := plain.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}

	reorderAt(renumbered, 1<<20)
	if ok, err := renumbered.Renumber(0); ok || err != nil {
		t.Fatalf("Renumber below the threshold: %v, %v", ok, err)
	}
	renumbered.Close()
	if _, err := renumbered.Renumber(0); err == nil {
		t.Fatal("Renumber on a closed index succeeded")
	}
}
