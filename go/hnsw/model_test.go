package hnsw

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/strata-db/strata/go/internal/racetest"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

// model is the brute-force reference: a map of live ids to vectors.
type model struct {
	dim  int
	vecs map[uint64][]float32
}

// knn returns the exact filtered top-k ids of q, ties broken by id.
func (m *model) knn(q []float32, k int, allow map[uint64]bool, deny map[uint64]bool) []int64 {
	type hit struct {
		id uint64
		d  float64
	}
	var hits []hit
	for id, v := range m.vecs {
		if (allow != nil && !allow[id]) || deny[id] {
			continue
		}
		hits = append(hits, hit{id, synth.Distance("l2", q, v)})
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.d != b.d {
			if a.d < b.d {
				return -1
			}
			return 1
		}
		if a.id < b.id {
			return -1
		}
		return 1
	})
	out := make([]int64, k)
	for i := range out {
		out[i] = -1
		if i < len(hits) {
			out[i] = int64(hits[i].id)
		}
	}
	return out
}

func idSet(ids []uint64) map[uint64]bool {
	if ids == nil {
		return nil
	}
	s := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		s[id] = true
	}
	return s
}

// TestOperationsMatchBruteForceModel runs random sequences of upserts,
// removals, compactions and filtered searches and demands the exact plan
// return exactly the model's answer, and the graph plan nearly always.
func TestOperationsMatchBruteForceModel(t *testing.T) {
	racetest.AnswersOnly(t)
	const dim, k = 8, 5
	rng := rand.New(rand.NewPCG(42, 1))
	x := mustNew(t, Config{Dim: dim, M: 8, EfConstruction: 64, Seed: 3})
	m := &model{dim: dim, vecs: map[uint64][]float32{}}
	randVec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.IntN(2000)) / 100 // coarse grid: exact float sums
		}
		return v
	}
	graphHits, graphTotal := 0, 0
	for step := 0; step < 400; step++ {
		switch op := rng.IntN(10); {
		case op < 4: // add or upsert a small batch
			n := 1 + rng.IntN(20)
			ids := make([]uint64, 0, n)
			seen := map[uint64]bool{}
			var flat []float32
			for len(ids) < n {
				id := uint64(rng.IntN(300))
				if seen[id] {
					continue
				}
				seen[id] = true
				v := randVec()
				ids = append(ids, id)
				flat = append(flat, v...)
				m.vecs[id] = v
			}
			if err := x.Add(flat, ids, nil, 2); err != nil {
				t.Fatal(err)
			}
		case op < 6: // remove some ids, some unknown
			var ids []uint64
			for i := 0; i < 1+rng.IntN(10); i++ {
				ids = append(ids, uint64(rng.IntN(300)))
			}
			ids = slices.Compact(slices.Sorted(slices.Values(ids)))
			missing := false
			for _, id := range ids {
				if _, ok := m.vecs[id]; !ok {
					missing = true
				}
			}
			_, err := x.Remove(ids, false)
			if missing != errors.Is(err, ErrNotFound) {
				t.Fatalf("step %d: Remove(%v) = %v, model says missing=%v", step, ids, err, missing)
			}
			if _, err := x.Remove(ids, true); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				delete(m.vecs, id)
			}
		case op == 6:
			if err := x.Compact(2); err != nil {
				t.Fatal(err)
			}
			if x.Tombstones() != 0 {
				t.Fatalf("step %d: %d tombstones after compaction", step, x.Tombstones())
			}
		default: // filtered search, both plans
			q := randVec()
			var f *Filter
			if rng.IntN(3) > 0 {
				f = &Filter{}
				if rng.IntN(2) == 0 {
					f.Allow = []uint64{}
					for i := 0; i < rng.IntN(100); i++ {
						f.Allow = append(f.Allow, uint64(rng.IntN(350)))
					}
				}
				for i := 0; i < rng.IntN(30); i++ {
					f.Deny = append(f.Deny, uint64(rng.IntN(350)))
				}
			}
			var allow, deny map[uint64]bool
			if f != nil {
				allow, deny = idSet(f.Allow), idSet(f.Deny)
			}
			want := m.knn(q, k, allow, deny)
			for _, plan := range []Plan{PlanExact, PlanGraph} {
				x.testing.forcePlan, x.testing.forcedPlan = true, plan
				ids := make([]int64, k)
				dists := make([]float32, k)
				if _, err := x.SearchFiltered(q, k, 64, 1, f, ids, dists); err != nil {
					t.Fatal(err)
				}
				if plan == PlanExact {
					// Ties can order differently; compare distances, and ids
					// where distances are unique.
					for i := range want {
						if (want[i] == -1) != (ids[i] == -1) {
							t.Fatalf("step %d: exact plan returned %v, model %v", step, ids, want)
						}
						if want[i] >= 0 && synth.Distance("l2", q, m.vecs[uint64(ids[i])]) != synth.Distance("l2", q, m.vecs[uint64(want[i])]) {
							t.Fatalf("step %d: exact plan returned %v, model %v", step, ids, want)
						}
					}
					continue
				}
				for i := range want {
					if want[i] == -1 {
						if ids[i] != -1 {
							t.Fatalf("step %d: graph plan returned %d where the model has nothing", step, ids[i])
						}
						continue
					}
					graphTotal++
					if slices.Contains(ids, want[i]) {
						graphHits++
					} else if _, live := m.vecs[uint64(ids[i])]; ids[i] != -1 && !live {
						t.Fatalf("step %d: graph plan returned removed id %d", step, ids[i])
					}
				}
				for _, id := range ids {
					if id >= 0 && ((allow != nil && !allow[uint64(id)]) || deny[uint64(id)]) {
						t.Fatalf("step %d: graph plan returned filtered-out id %d", step, id)
					}
				}
			}
			x.testing.forcePlan = false
		}
		if x.Len() != len(m.vecs) {
			t.Fatalf("step %d: Len %d, model %d", step, x.Len(), len(m.vecs))
		}
	}
	if r := float64(graphHits) / float64(graphTotal); r < 0.97 {
		t.Errorf("graph plan recall against the model %.4f over %d results, want >= 0.97", r, graphTotal)
	}
	if err := x.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
}

func TestPlannerPicksExactForSelectiveFilters(t *testing.T) {
	racetest.AnswersOnly(t)
	data := synth.Clustered(3000, 16, 30, 0.2, 8)
	x := mustNew(t, Config{Dim: 16, Metric: metric.L2})
	if err := x.Add(data, nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, 10)
	dists := make([]float32, 10)
	q := data[:16]
	cases := []struct {
		f    *Filter
		want Plan
	}{
		{nil, PlanGraph},
		{&Filter{Allow: []uint64{1, 2, 3}}, PlanExact},
		{&Filter{Allow: []uint64{}}, PlanEmpty},
		{&Filter{Allow: []uint64{999999}}, PlanEmpty},
		{&Filter{Deny: []uint64{5}}, PlanGraph},
	}
	for _, c := range cases {
		st, err := x.SearchFiltered(q, 10, 64, 1, c.f, ids, dists)
		if err != nil {
			t.Fatal(err)
		}
		if st.Plan != c.want {
			t.Errorf("filter %+v: plan %v, want %v", c.f, st.Plan, c.want)
		}
	}
}

func TestRemovedIDsNeverReturnedAndReaddWorks(t *testing.T) {
	racetest.AnswersOnly(t)
	data := synth.Clustered(2000, 16, 20, 0.2, 9)
	x := mustNew(t, Config{Dim: 16})
	if err := x.Add(data, nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	var gone []uint64
	for id := uint64(0); id < 2000; id += 2 {
		gone = append(gone, id)
	}
	if n, err := x.Remove(gone, false); err != nil || n != 1000 {
		t.Fatalf("Remove: %d, %v", n, err)
	}
	ids, _ := search(t, x, data[:100*16], 10, 64, 0)
	for _, id := range ids {
		if id%2 == 0 {
			t.Fatalf("removed id %d returned", id)
		}
	}
	// Re-adding a removed id returns the new vector.
	far := make([]float32, 16)
	for i := range far {
		far[i] = 100
	}
	if err := x.Add(far, []uint64{0}, nil, 1); err != nil {
		t.Fatal(err)
	}
	got, dists := search(t, x, far, 1, 64, 1)
	if got[0] != 0 || dists[0] != 0 {
		t.Fatalf("re-added id: got %d at %v", got[0], dists[0])
	}
	out := make([]float32, 16)
	if err := x.GetVectors([]uint64{0}, out); err != nil || out[3] != 100 {
		t.Fatalf("GetVectors: %v %v", out, err)
	}
	if err := x.GetVectors([]uint64{2}, out); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetVectors of removed id: %v", err)
	}
}

func TestCompactKeepsRecall(t *testing.T) {
	racetest.AnswersOnly(t)
	data := synth.Clustered(testN, testDim, 100, 0.15, 21)
	queries := synth.Clustered(testQueries, testDim, 100, 0.15, 22)
	x := mustNew(t, Config{Dim: testDim, Seed: 4})
	if err := x.Add(data, nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	var gone []uint64
	for id := uint64(0); id < uint64(testN); id += 3 {
		gone = append(gone, id)
	}
	if _, err := x.Remove(gone, false); err != nil {
		t.Fatal(err)
	}
	if err := x.Compact(0); err != nil {
		t.Fatal(err)
	}
	if err := x.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
	// Fresh build of the same live set for comparison.
	var liveVecs []float32
	var liveIDs []uint64
	for id := 0; id < testN; id++ {
		if id%3 != 0 {
			liveVecs = append(liveVecs, data[id*testDim:(id+1)*testDim]...)
			liveIDs = append(liveIDs, uint64(id))
		}
	}
	fresh := mustNew(t, Config{Dim: testDim, Seed: 4})
	if err := fresh.Add(liveVecs, liveIDs, nil, 0); err != nil {
		t.Fatal(err)
	}
	pos := synth.KNN("l2", liveVecs, queries, testDim, testK)
	truth := make([][]uint64, len(pos))
	for i, row := range pos {
		for _, p := range row {
			truth[i] = append(truth[i], liveIDs[p])
		}
	}
	got, _ := search(t, x, queries, testK, 32, 0)
	want, _ := search(t, fresh, queries, testK, 32, 0)
	rc, rf := synth.Recall(got, truth, testK), synth.Recall(want, truth, testK)
	if rc < rf-0.01 {
		t.Errorf("recall after compaction %.4f < fresh build %.4f - 0.01", rc, rf)
	}
	all, err := x.IDs()
	if err != nil || x.Len() != len(liveIDs) || len(all) != len(liveIDs) {
		t.Fatalf("Len %d, IDs %d (%v), want %d", x.Len(), len(all), err, len(liveIDs))
	}
}

func TestFilteredEfWidensOnlyFilteredSearches(t *testing.T) {
	cases := []struct{ ef, selected, live, want int }{
		{64, 100, 100, 64},   // no filter
		{64, 0, 100, 64},     // nothing allowed: the plan is empty anyway
		{64, 50, 100, 256},   // half allowed: 1/p² = 4
		{64, 1, 100, 64 * 8}, // capped
		{10, 99, 100, 11},    // nearly unfiltered: barely widened
	}
	for _, c := range cases {
		if got := filteredEf(c.ef, c.selected, c.live, true); got != c.want {
			t.Errorf("filteredEf(%d, %d, %d, routing) = %d, want %d", c.ef, c.selected, c.live, got, c.want)
		}
	}
	// A search of the allowed nodes: ef/p, at most 2·ef.
	allowedCases := []struct{ ef, selected, live, want int }{
		{64, 100, 100, 64},
		{64, 80, 100, 80},
		{64, 50, 100, 128},
		{64, 10, 100, 128},
	}
	for _, c := range allowedCases {
		if got := filteredEf(c.ef, c.selected, c.live, false); got != c.want {
			t.Errorf("filteredEf(%d, %d, %d, allowed) = %d, want %d", c.ef, c.selected, c.live, got, c.want)
		}
	}
}
