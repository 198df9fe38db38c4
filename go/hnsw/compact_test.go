package hnsw

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/strata-db/strata/go/internal/synth"
)

// liveModel checks that x holds exactly the ids of model with their vectors,
// that its graph is intact and that each stored vector finds itself.
func liveModel(t *testing.T, x *Index, model map[uint64][]float32) {
	t.Helper()
	if err := x.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	ids, err := x.IDs()
	if err != nil {
		t.Fatal(err)
	}
	want := make([]uint64, 0, len(model))
	for id := range model {
		want = append(want, id)
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("live ids: got %d ids, want %d (first difference near %v)", len(ids), len(want), firstDiff(ids, want))
	}
	dim := x.Dim()
	got := make([]float32, dim)
	outIDs, outDists := make([]int64, 1), make([]float32, 1)
	misses := 0
	for id, v := range model {
		if err := x.GetVectors([]uint64{id}, got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, v) {
			t.Fatalf("id %d: stored vector changed", id)
		}
		if err := x.Search(v, 1, 64, 1, outIDs, outDists); err != nil {
			t.Fatal(err)
		}
		if outDists[0] != 0 {
			misses++
		}
	}
	if misses > len(model)/100 {
		t.Fatalf("%d of %d stored vectors do not find themselves at distance 0", misses, len(model))
	}
}

func firstDiff(a, b []uint64) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("position %d: %d vs %d", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}

// TestCompactCarriesOverWritesMadeDuringTheBuild: Add, upsert and Remove
// made while Compact builds its graph aside must all be in the swapped-in
// graph (before the carry-over they were lost, or a removed id came back).
func TestCompactCarriesOverWritesMadeDuringTheBuild(t *testing.T) {
	for _, lockedMax := range []int{1024, -1} { // all under the lock; all in unlocked rounds
		t.Run(fmt.Sprintf("lockedMax=%d", lockedMax), func(t *testing.T) {
			testCompactCarriesOver(t, lockedMax)
		})
	}
}

func testCompactCarriesOver(t *testing.T, lockedMax int) {
	for _, cfg := range []Config{
		{Dim: 16, M: 8, Seed: 5},
		{Dim: 16, M: 8, Seed: 5, Quantization: QuantSQ8, Rerank: true},
		{Dim: 16, M: 8, Seed: 5, Quantization: QuantSQ8},
	} {
		t.Run(fmt.Sprintf("%v-rerank=%v", cfg.Quantization, cfg.Rerank), func(t *testing.T) {
			const n = 1200 / raceShrink
			dim := cfg.Dim
			data := synth.Clustered(2*n, dim, 30, 0.2, 9)
			x := mustNew(t, cfg)
			x.build.compactLockedMax = lockedMax
			if err := x.Add(data[:n*dim], nil, nil, 2); err != nil {
				t.Fatal(err)
			}
			model := map[uint64][]float32{}
			for id := range uint64(n) {
				v := make([]float32, dim)
				if err := x.GetVectors([]uint64{id}, v); err != nil {
					t.Fatal(err)
				}
				model[id] = v
			}
			// Tombstones before: every 4th id removed.
			var gone []uint64
			for id := uint64(0); id < n; id += 4 {
				gone = append(gone, id)
				delete(model, id)
			}
			if _, err := x.Remove(gone, false); err != nil {
				t.Fatal(err)
			}
			stored := func(ids ...uint64) {
				for _, id := range ids {
					v := make([]float32, dim)
					if err := x.GetVectors([]uint64{id}, v); err != nil {
						t.Fatal(err)
					}
					model[id] = v
				}
			}
			x.build.compactBuilt = func() {
				// New ids, upserts of live ids, a removed id added back,
				// removals of live ids.
				if err := x.Add(data[n*dim:(n+50)*dim], nil, nil, 1); err != nil {
					t.Error(err)
				}
				stored(seq(n, n+50)...)
				upserts := []uint64{1, 2, 3, 0, 8, n + 3}
				if err := x.Add(data[(n+60)*dim:(n+66)*dim], upserts, nil, 1); err != nil {
					t.Error(err)
				}
				stored(upserts...)
				removed := []uint64{5, 6, 7, n + 10, 2}
				if _, err := x.Remove(removed, false); err != nil {
					t.Error(err)
				}
				for _, id := range removed {
					delete(model, id)
				}
			}
			if err := x.Compact(2); err != nil {
				t.Fatal(err)
			}
			x.build.compactBuilt = nil
			liveModel(t, x, model)
			// Tombstones left: only the ids written during the build that
			// were live when it started: 1, 2, 3 (upserted; 2 then removed),
			// 5, 6, 7 (removed). 0 and 8 were tombstones then, n+3 and n+10
			// new.
			if got := x.Tombstones(); got != 6 {
				t.Errorf("Tombstones after compact = %d, want 6", got)
			}
			// A second compaction with no writes leaves none.
			if err := x.Compact(1); err != nil {
				t.Fatal(err)
			}
			if got := x.Tombstones(); got != 0 {
				t.Errorf("Tombstones after a quiet compact = %d, want 0", got)
			}
			liveModel(t, x, model)
		})
	}
}

func seq(from, to uint64) []uint64 {
	out := make([]uint64, 0, to-from)
	for id := from; id < to; id++ {
		out = append(out, id)
	}
	return out
}

// TestCompactUnderConcurrentWritesAndSearches runs compactions while one
// goroutine writes (its model is exact: writes are its own) and others
// search; run with -race. Afterwards the index must equal the model.
func TestCompactUnderConcurrentWritesAndSearches(t *testing.T) {
	const dim = 8
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	x := mustNew(t, Config{Dim: dim, M: 6, EfConstruction: 40, Seed: 2})
	data := synth.Clustered(3000, dim, 20, 0.3, 4)
	if err := x.Add(data[:1000*dim], nil, nil, 2); err != nil {
		t.Fatal(err)
	}
	model := map[uint64][]float32{}
	for id := range uint64(1000) {
		v := make([]float32, dim)
		copy(v, data[id*dim:(id+1)*dim])
		model[id] = v
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // the writer
		rng := rand.New(rand.NewPCG(7, 8))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := uint64(rng.IntN(1500))
			if rng.IntN(3) == 0 {
				if _, err := x.Remove([]uint64{id}, true); err != nil {
					t.Error(err)
					return
				}
				delete(model, id)
				continue
			}
			row := rng.IntN(3000)
			v := data[row*dim : (row+1)*dim]
			if err := x.Add(v, []uint64{id}, nil, 1); err != nil {
				t.Error(err)
				return
			}
			model[id] = slices.Clone(v)
		}
	})
	for range 2 { // searchers
		wg.Go(func() {
			ids, dists := make([]int64, 5), make([]float32, 5)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := x.Search(data[(i%3000)*dim:(i%3000+1)*dim], 5, 32, 1, ids, dists); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for round := range rounds {
		x.build.compactLockedMax = []int{1024, -1}[round%2] // odd rounds carry over unlocked
		if err := x.Compact(2); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	liveModel(t, x, model)
}
