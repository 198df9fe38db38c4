package hnsw

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// filterFixture is a fixed clustered set: n points of 32 dimensions, 200
// queries from the same clusters (40 under the race detector), and random and correlated allow lists
// at 50/10/1/0.1 %.
type filterFixture struct {
	data, queries []float32
	lists         map[string][]uint64
}

const filterFixtureDim = 32

func newFilterFixture(n int) filterFixture {
	nq := map[bool]int{false: 200, true: 40}[raceEnabled]
	draw := synth.Clustered(n+nq, filterFixtureDim, 50, 0.15, 31)
	data, queries := draw[:n*filterFixtureDim], draw[n*filterFixtureDim:]
	return filterFixture{data, queries, filterAllowLists(data, filterFixtureDim, []float64{0.5, 0.1, 0.01, 0.001}, 7)}
}

// filteredRecall searches every query of fx with filter f at ef and
// returns recall@k against the exact answer among the allowed ids that
// are live (live nil: all), with the call's stats, failing the test on an
// id outside them.
func filteredRecall(t *testing.T, x *Index, fx filterFixture, f *Filter, live map[uint64]bool, k, ef int) (float64, SearchStats) {
	t.Helper()
	among := f.Allow
	if live != nil {
		among = slices.DeleteFunc(slices.Clone(among), func(id uint64) bool { return !live[id] })
	}
	truth := filteredTruth(fx.data, fx.queries, filterFixtureDim, k, among)
	nq := len(fx.queries) / filterFixtureDim
	ids, dists := make([]int64, nq*k), make([]float32, nq*k)
	st, err := x.SearchFiltered(fx.queries, k, ef, 1, f, ids, dists)
	if err != nil {
		t.Fatal(err)
	}
	allowed := idSet(among)
	hits, total := 0, 0
	for q := range nq {
		row := ids[q*k : (q+1)*k]
		for _, id := range row {
			if id >= 0 && !allowed[uint64(id)] {
				t.Fatalf("query %d: id %d is not among the allowed live ids", q, id)
			}
		}
		for _, id := range truth[q] {
			total++
			if slices.Contains(row, int64(id)) {
				hits++
			}
		}
	}
	return float64(hits) / float64(total), st
}

// The fixtures' graphs are built on one thread, so that they are the same
// from run to run (a parallel build's links depend on the schedule).

// TestFilteredGraphRecallAtEachSelectivity guards the filtered graph
// traversal (searchAllowed): forced to the graph plan at the default ef,
// it must reach recall@10 0.99 against the exact filtered answer at 50,
// 10 and 0.1 % for random and correlated allow lists, and the planner's
// own choice at every selectivity. A traversal that loses its way (two
// hops not followed, visited marks wrong, the reroute missing) falls
// below. At 1 % (80 allowed points here) the forced graph is held to 0.95
// only (random: 0.965): most of its queries fall back, the admitted
// nodes two hops apart no longer connect at M 16, and the planner scans
// such a list (below about ef·2M·5 allowed points) instead. A correlated
// list (one region far from most queries) sends those queries to the
// fallback (sparseNear): 0.998 at 10 %, 1.0 at 50 %.
func TestFilteredGraphRecallAtEachSelectivity(t *testing.T) {
	racetest.AnswersOnly(t)
	fx := newFilterFixture(map[bool]int{false: 8000, true: 3000}[raceEnabled])
	x := mustNew(t, Config{Dim: filterFixtureDim, Metric: metric.L2, Seed: 3})
	if err := x.Add(fx.data, nil, nil, 1); err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(fx.lists)) {
		f := &Filter{Allow: fx.lists[name]}
		for _, plan := range []Plan{PlanGraph, PlanEmpty} { // PlanEmpty: the planner's choice
			x.testing.forcePlan, x.testing.forcedPlan = plan == PlanGraph, plan
			want := 0.99
			switch {
			case plan != PlanGraph:
			case strings.HasSuffix(name, "/0.01"):
				want = 0.95
			}
			r, st := filteredRecall(t, x, fx, f, nil, 10, 0)
			t.Logf("%s, plan %v: recall@10 %.4f, %d distances, %d rerouted", name, st.Plan, r, st.DistanceComputations, st.Rerouted)
			if r < want {
				t.Errorf("%s, plan %v: recall@10 %.4f, want >= %.2f (%d distances, %d rerouted)", name, st.Plan, r, want, st.DistanceComputations, st.Rerouted)
			}
		}
	}
}

// TestFilteredGraphMeasuresOnlyAllowedNodes checks that the filtered graph
// search is the cheap one: at 10 % it computes a fraction of the
// distances of the routing search at the same ef, and measures no node
// outside the allow list.
func TestFilteredGraphMeasuresOnlyAllowedNodes(t *testing.T) {
	racetest.AnswersOnly(t)
	fx := newFilterFixture(map[bool]int{false: 8000, true: 3000}[raceEnabled])
	x := mustNew(t, Config{Dim: filterFixtureDim, Metric: metric.L2, Seed: 3})
	if err := x.Add(fx.data, nil, nil, 1); err != nil {
		t.Fatal(err)
	}
	f := &Filter{Allow: fx.lists["random/0.1"]}
	x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
	rAllowed, allowed := filteredRecall(t, x, fx, f, nil, 10, 64)
	x.testing.routeFilter = true
	rRouted, routed := filteredRecall(t, x, fx, f, nil, 10, 64)
	if allowed.DistanceComputations*3 > routed.DistanceComputations {
		t.Errorf("10 %%: %d distances searching the allowed nodes, %d routing: want under a third", allowed.DistanceComputations, routed.DistanceComputations)
	}
	if allowed.LinksRead == 0 || routed.LinksRead != 0 {
		t.Errorf("links read: allowed search %d (want > 0), routing %d (want 0)", allowed.LinksRead, routed.LinksRead)
	}
	// A random list's queries keep to the graph: on this small graph a
	// few neighbourhoods fall below half the allowed share by chance
	// (nearDensity; 7 of 200 here), none at 100k a segment (segquery).
	if nq := len(fx.queries) / filterFixtureDim; allowed.Rerouted*20 > nq {
		t.Errorf("%d of %d queries rerouted at 10 %%: want at most 5 %%", allowed.Rerouted, nq)
	}
	t.Logf("recall %.4f / %.4f, distances %d / %d (allowed / routed)", rAllowed, rRouted, allowed.DistanceComputations, routed.DistanceComputations)

	// Every measured node is allowed: a graph searched through one allowed
	// node computes at most the descent's distances plus one.
	x.testing = searchTesting{forcePlan: true, forcedPlan: PlanGraph}
	ids, dists := make([]int64, 10), make([]float32, 10)
	st, err := x.SearchFiltered(fx.queries[:filterFixtureDim], 10, 64, 1, &Filter{Allow: []uint64{17}}, ids, dists)
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] != 17 || ids[1] != -1 {
		t.Fatalf("one allowed id: got %v", ids)
	}
	if st.Rerouted == 0 && st.DistanceComputations > 200 {
		t.Errorf("one allowed id: %d distances without a reroute", st.DistanceComputations)
	}
}

// TestDrainedThroughListsGatherTheSameNodes guards the drained marks of
// the filtered graph search (admittedNeighbours): skipping the link lists
// of passed-through nodes already read to their end must gather exactly
// the nodes that reading them again would, so every query's results and
// distance count are those of the search that rereads them, from fewer
// link lists. A mark set on a list the budget cut short, or kept across
// searches, loses nodes and changes the answers.
func TestDrainedThroughListsGatherTheSameNodes(t *testing.T) {
	racetest.AnswersOnly(t)
	fx := newFilterFixture(map[bool]int{false: 8000, true: 3000}[raceEnabled])
	x := mustNew(t, Config{Dim: filterFixtureDim, Metric: metric.L2, Seed: 3})
	if err := x.Add(fx.data, nil, nil, 1); err != nil {
		t.Fatal(err)
	}
	nq, k := len(fx.queries)/filterFixtureDim, 10
	for _, name := range []string{"random/0.5", "random/0.1", "random/0.01", "correlated/0.1"} {
		f := &Filter{Allow: fx.lists[name]}
		for _, budget := range []int{0, 5} { // 0: filterHopBudget; 5 cuts lists short
			var ids [2][]int64
			var dists [2][]float32
			var stats [2]SearchStats
			for i, reread := range []bool{true, false} {
				x.testing = searchTesting{forcePlan: true, forcedPlan: PlanGraph, rereadThrough: reread, filterHopBudget: budget}
				ids[i], dists[i] = make([]int64, nq*k), make([]float32, nq*k)
				st, err := x.SearchFiltered(fx.queries, k, 48, 1, f, ids[i], dists[i])
				if err != nil {
					t.Fatal(err)
				}
				stats[i] = st
			}
			if !slices.Equal(ids[0], ids[1]) || !slices.Equal(dists[0], dists[1]) {
				t.Errorf("%s, budget %d: results differ when drained lists are skipped", name, budget)
			}
			if stats[0].DistanceComputations != stats[1].DistanceComputations || stats[0].Rerouted != stats[1].Rerouted {
				t.Errorf("%s, budget %d: %d distances and %d reroutes rereading, %d and %d skipping", name, budget,
					stats[0].DistanceComputations, stats[0].Rerouted, stats[1].DistanceComputations, stats[1].Rerouted)
			}
			if stats[1].LinksRead >= stats[0].LinksRead {
				t.Errorf("%s, budget %d: %d link lists read skipping drained ones, %d rereading: want fewer", name, budget,
					stats[1].LinksRead, stats[0].LinksRead)
			}
			t.Logf("%s, budget %d: link lists %d rereading, %d skipping drained", name, budget, stats[0].LinksRead, stats[1].LinksRead)
		}
	}
	x.testing = searchTesting{}
}

// TestFilteredGraphWithDeletesAndSQ8 runs the filtered graph plan on an
// SQ8 graph (with re-ranking) and on a float graph after removing a fifth
// of the points, allow lists naming removed ids too: removed ids never
// come back, and recall against the live allowed points holds.
func TestFilteredGraphWithDeletesAndSQ8(t *testing.T) {
	racetest.AnswersOnly(t)
	fx := newFilterFixture(map[bool]int{false: 6000, true: 2500}[raceEnabled])
	n := len(fx.data) / filterFixtureDim
	for _, quant := range []string{"float", "sq8"} {
		t.Run(quant, func(t *testing.T) {
			cfg := Config{Dim: filterFixtureDim, Metric: metric.L2, Seed: 5}
			if quant == "sq8" {
				cfg.Quantization, cfg.Rerank = QuantSQ8, true
			}
			x := mustNew(t, cfg)
			if err := x.Add(fx.data, nil, nil, 1); err != nil {
				t.Fatal(err)
			}
			var live map[uint64]bool
			if quant == "float" {
				live = map[uint64]bool{}
				var gone []uint64
				for id := range uint64(n) {
					if id%5 == 2 {
						gone = append(gone, id)
					} else {
						live[id] = true
					}
				}
				if _, err := x.Remove(gone, false); err != nil {
					t.Fatal(err)
				}
			}
			x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
			for _, name := range []string{"random/0.5", "random/0.1", "correlated/0.5", "correlated/0.1"} {
				r, st := filteredRecall(t, x, fx, &Filter{Allow: fx.lists[name]}, live, 10, 0)
				if r < 0.99 {
					t.Errorf("%s %s: recall@10 %.4f, want >= 0.99 (%d rerouted)", quant, name, r, st.Rerouted)
				}
			}
		})
	}
}

// TestPlanCostModel pins choosePlan's choices for a graph of M = 16 at
// the sizes the cost model was fitted on (TestFilterTraversalBench): the
// search of the allowed nodes wins at 10 % of 100k and at 1 % of 10M, the
// scan at 1 % of 100k and 1M (ef 128, the default 64 widened) and for a
// few thousand allowed points, and a routing (RaBitQ) search keeps the
// old rule, selected² < ef·2M·n.
func TestPlanCostModel(t *testing.T) {
	x := mustNew(t, Config{Dim: 4, Metric: metric.L2})
	if err := x.Add([]float32{0, 0, 0, 1, 0, 0, 1, 0}, nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	g := x.graph.Load()
	cases := []struct {
		selected, live, ef int
		routing            bool
		want               Plan
	}{
		{10_000, 100_000, 128, false, PlanGraph},
		{1_000, 100_000, 128, false, PlanExact},
		{10_000, 1_000_000, 128, false, PlanExact},
		{100_000, 10_000_000, 128, false, PlanGraph},
		{50_000, 100_000, 128, false, PlanGraph},
		{2_200, 4_000, 64, false, PlanExact}, // 55 %: 2,200 < 2,048·(1 + 0.45·(1 + 1/17.6))
		{3_000, 4_000, 64, false, PlanGraph}, // 75 %: 3,000 > 2,048·(1 + 0.25·(1 + 1/24))
		{0, 100_000, 128, false, PlanEmpty},
	}
	for _, c := range cases {
		if got := x.choosePlan(g, c.selected, c.live, c.ef, c.routing); got != c.want {
			t.Errorf("choosePlan(selected %d, live %d, ef %d): %v, want %v", c.selected, c.live, c.ef, got, c.want)
		}
	}
	// Routing: selected² against ef·2M·capacity.
	if c := g.capacity(); c > 32 && x.choosePlan(g, c, 100*c, 1, true) != PlanGraph {
		t.Errorf("routing, %d selected at ef 1 on capacity %d: want graph", c, c)
	}
	if got := x.choosePlan(g, 2, 100, 64, true); got != PlanExact {
		t.Errorf("routing, 2 selected at ef 64: %v, want exact", got)
	}
}

// TestFilteredFallbackCostsAtMostTwiceTheScan prevents a query that the
// search of the allowed nodes cannot answer from paying for that search in
// full and then for its fallback: forced to the graph plan, every query
// of every allow list computes at most twice the distances of the exact
// scan the fallback is here (every list's scan is cheaper than routing at
// this size), plus its descent and the step that passed the bound (one
// expansion or routing step: up to 2M distances).
func TestFilteredFallbackCostsAtMostTwiceTheScan(t *testing.T) {
	racetest.AnswersOnly(t)
	fx := newFilterFixture(map[bool]int{false: 8000, true: 3000}[raceEnabled])
	x := mustNew(t, Config{Dim: filterFixtureDim, Metric: metric.L2, Seed: 3})
	if err := x.Add(fx.data, nil, nil, 1); err != nil {
		t.Fatal(err)
	}
	x.testing.forcePlan, x.testing.forcedPlan = true, PlanGraph
	ids, dists := make([]int64, 10), make([]float32, 10)
	const descent, lastStep = 100, 32 // the upper levels' greedy steps, generously; 2M
	for _, name := range slices.Sorted(maps.Keys(fx.lists)) {
		allow := fx.lists[name]
		worst, fellBack := int64(0), 0
		for q := range len(fx.queries) / filterFixtureDim {
			st, err := x.SearchFiltered(fx.queries[q*filterFixtureDim:(q+1)*filterFixtureDim], 10, 0, 1, &Filter{Allow: allow}, ids, dists)
			if err != nil {
				t.Fatal(err)
			}
			worst, fellBack = max(worst, st.DistanceComputations), fellBack+st.Rerouted
		}
		t.Logf("%s: %d allowed, %d queries fell back, at most %d distances", name, len(allow), fellBack, worst)
		if limit := int64(2*len(allow) + descent + lastStep); worst > limit {
			t.Errorf("%s: a query computed %d distances, want <= %d (twice the scan of %d allowed, the descent and one step)", name, worst, limit, len(allow))
		}
	}
}
