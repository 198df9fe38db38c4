package hnsw

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/metric"
)

// TestMergeFreshBuildsTheSameGraph guards mergeFresh's claim to give the
// list one-at-a-time insertion gives: built single-threaded from the same
// data, the graphs must have the same links at every level. A newcomer
// placed before an equal entry, a dropped entry that should stay, or a
// node expanded out of turn changes some link list.
func TestMergeFreshBuildsTheSameGraph(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim, n = 8, 3000
	rng := rand.New(rand.NewPCG(7, 8))
	data := make([]float32, n*dim)
	for i := range data {
		// Few distinct values: many equal distances, so ties are tested.
		data[i] = float32(rng.IntN(4))
	}
	for _, m := range []metric.Metric{metric.L2, metric.Cosine} {
		var graphs [2]*graph
		for side := range 2 {
			x := mustNew(t, Config{Dim: dim, Metric: m, M: 6, EfConstruction: 40, Seed: 9})
			x.testing.mergeOff = side == 0
			if err := x.Add(data, nil, nil, 1); err != nil {
				t.Fatal(err)
			}
			graphs[side] = x.graph.Load()
		}
		a, b := graphs[0], graphs[1]
		for node := uint32(0); node < uint32(n); node++ {
			if a.levels[node] != b.levels[node] {
				t.Fatalf("%v node %d: levels %d and %d", m, node, a.levels[node], b.levels[node])
			}
			for level := 0; level <= int(a.levels[node]); level++ {
				la, lb := a.links(node, level), b.links(node, level)
				if !slices.Equal(la[:la[0]+1], lb[:lb[0]+1]) {
					t.Fatalf("%v node %d level %d: one at a time %v, merged %v", m, node, level, la[1:la[0]+1], lb[1:lb[0]+1])
				}
			}
		}
	}
}

// TestMergeFreshKeepsTheFirstEf checks the merge itself against sorting
// everything: the list must be the first ef of (list, then newcomers in
// order) stably sorted by distance, and lowest the first newcomer's slot.
func TestMergeFreshKeepsTheFirstEf(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var scratch []candidate
	for trial := 0; trial < 20000; trial++ {
		ef := 1 + rng.IntN(12)
		n := 1 + rng.IntN(ef)
		list := make([]listEntry, n, ef+1)
		for i := range list {
			list[i] = listEntry{candidate: candidate{float32(rng.IntN(6)), uint32(i)}, expanded: rng.IntN(2) == 0, admitted: true}
		}
		slices.SortStableFunc(list, func(a, b listEntry) int { return cmp.Compare(a.dist, b.dist) })
		k := rng.IntN(8)
		nodes := make([]uint32, k)
		dists := make([]float32, k)
		for i := range nodes {
			nodes[i], dists[i] = uint32(100+i), float32(rng.IntN(6))
		}
		// One at a time, as searchList inserts them when filtering.
		want := slices.Clone(list)
		wantLowest := ef
		for i, d := range dists {
			if len(want) == ef && d >= want[len(want)-1].dist {
				continue
			}
			lo := len(want)
			for lo > 0 && want[lo-1].dist > d {
				lo--
			}
			want = slices.Insert(want, lo, listEntry{candidate: candidate{d, nodes[i]}, admitted: true})
			if len(want) > ef {
				want = want[:ef]
			}
			wantLowest = min(wantLowest, lo)
		}
		got, lowest := mergeFresh(append(make([]listEntry, 0, ef+1), list...), ef, nodes, dists, &scratch)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d ef=%d: list %v + %v %v\ngot  %v\nwant %v", trial, ef, list, nodes, dists, got, want)
		}
		// One at a time records where a newcomer landed even if a later
		// one pushed it past ef; the first unexpanded entry from there on
		// is what matters, and it must be the same.
		if firstUnexpanded(got, lowest) != firstUnexpanded(want, wantLowest) {
			t.Fatalf("trial %d: next from %d, want from %d in %v", trial, lowest, wantLowest, got)
		}
	}
}

func firstUnexpanded(list []listEntry, from int) int {
	for from < len(list) && list[from].expanded {
		from++
	}
	return from
}
