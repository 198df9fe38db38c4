package hnsw

import (
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// TestPlanIsADeterministicPermutationSortedByDescent guards the insertion
// plan (insertorder.go): a position left out or repeated would leave a
// node unlinked or link it twice, a start taken from another position
// would send a node's level-0 search to the wrong place, and a plan that
// depended on the thread count would make builds differ between machines.
func TestPlanIsADeterministicPermutationSortedByDescent(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim = 16
	x := mustNew(t, Config{Dim: dim, Metric: metric.L2, M: 4, Seed: 3})
	if err := x.Add(synth.Clustered(testN, dim, 20, 0.2, 5), nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	g := x.graph.Load()
	top, ep := unpackEntry(g.entry.Load())
	if top == 0 {
		t.Fatal("the graph has a single level: nothing to plan")
	}
	// Plan the graph's own nodes as if they were a new batch: the descent
	// reads only upper levels, which planning does not change.
	var p1, p4 insertionPlan
	if !x.plan(g, 0, g.count, 1, &p1) || !x.plan(g, 0, g.count, 4, &p4) {
		t.Fatal("plan declined a multi-level graph")
	}
	if !slices.Equal(p1.order, p4.order) || !slices.Equal(p1.start, p4.start) {
		t.Fatal("the plan differs between 1 and 4 threads")
	}
	seen := make([]bool, g.count)
	for _, i := range p1.order {
		if seen[i] {
			t.Fatalf("position %d planned twice", i)
		}
		seen[i] = true
	}
	if len(p1.order) != g.count {
		t.Fatalf("plan holds %d positions, want %d", len(p1.order), g.count)
	}
	path := func(i uint32) []uint32 { return p1.paths[int(i)*top : int(i+1)*top] }
	for j := 1; j < len(p1.order); j++ {
		if slices.Compare(path(p1.order[j-1]), path(p1.order[j])) > 0 {
			t.Fatalf("positions %d and %d of the order are not sorted by descent path", j-1, j)
		}
	}
	// Each start is the greedy descent of its own vector.
	s := x.getSearcher()
	defer x.putSearcher(s)
	for i := range uint32(g.count) {
		q := s.setNodeQuery(g, i)
		cur := candidate{s.dist(g, x.dk, q, ep), ep}
		for l := top; l >= 1; l-- {
			cur = s.greedy(g, x.dk, q, cur, l, allNodes)
		}
		if cur != p1.start[i] {
			t.Fatalf("node %d: planned start %+v, its descent reaches %+v", i, p1.start[i], cur)
		}
	}
}

// TestBatchLargerThanTheGraphIsInsertedInRounds: one Add much larger than
// the graph is inserted in rounds (the first in the order given, each
// later one planned against the graph so far); every node must come out
// linked, reachable and found by a search for its own vector.
func TestBatchLargerThanTheGraphIsInsertedInRounds(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim = 16
	n := 3*minOrderedRound + 100 // rounds of 1024, 1024, 1124
	data := synth.Clustered(n, dim, 30, 0.2, 8)
	for _, threads := range []int{1, 4} {
		x := mustNew(t, Config{Dim: dim, Metric: metric.L2, Seed: 4})
		if err := x.Add(data, nil, nil, threads); err != nil {
			t.Fatal(err)
		}
		if err := x.CheckIntegrity(); err != nil {
			t.Fatalf("threads=%d: %v", threads, err)
		}
		ids, dists := search(t, x, data, 1, 32, 0)
		missed := 0
		for i, id := range ids {
			if id != int64(i) && dists[i] != 0 {
				missed++
			}
		}
		if missed > n/200 {
			t.Errorf("threads=%d: %d of %d vectors do not find themselves", threads, missed, n)
		}
	}
}

func TestRoundsNeverOutgrowTheLinkedGraph(t *testing.T) {
	for _, c := range []struct{ linked, remaining, want int }{
		{0, 100_000, minOrderedRound},       // empty graph: a first round in given order
		{0, 10, 10},                         // the whole of a small batch
		{1024, 100_000, 1024},               // never more than the graph holds
		{5000, 1000, 1000},                  // a batch smaller than the graph: one round
		{1 << 20, 1 << 20, maxOrderedRound}, // the paths stay bounded
	} {
		if got := roundSize(c.linked, c.remaining); got != c.want {
			t.Errorf("roundSize(%d, %d) = %d, want %d", c.linked, c.remaining, got, c.want)
		}
	}
}
