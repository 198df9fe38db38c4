package flat

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/strata-db/strata/go/batch"
	"github.com/strata-db/strata/go/internal/synth"
	"github.com/strata-db/strata/go/metric"
)

func randomVectors(rng *rand.Rand, n, dim int) []float32 {
	v := make([]float32, n*dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

func mustNew(t *testing.T, dim int, m metric.Metric) *Index {
	t.Helper()
	x, err := New(Config{Dim: dim, Metric: m})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func search(t *testing.T, x *Index, queries []float32, k, threads int) ([]int64, []float32) {
	t.Helper()
	nq := len(queries) / x.Dim()
	ids, dists := make([]int64, nq*k), make([]float32, nq*k)
	if err := x.Search(queries, k, 0, threads, ids, dists); err != nil {
		t.Fatal(err)
	}
	return ids, dists
}

func TestSearchMatchesFloat64Reference(t *testing.T) {
	const n, dim, nq, k = 300, 24, 20, 10
	for _, m := range []metric.Metric{metric.L2, metric.IP, metric.Cosine} {
		rng := rand.New(rand.NewPCG(1, uint64(m)))
		data, queries := randomVectors(rng, n, dim), randomVectors(rng, nq, dim)
		x := mustNew(t, dim, m)
		if err := x.Add(data, nil, nil, 0); err != nil {
			t.Fatal(err)
		}
		ids, dists := search(t, x, queries, k, 0)
		for q := range nq {
			query := queries[q*dim : (q+1)*dim]
			want := make([]float64, n)
			order := make([]int, n)
			for i := range n {
				want[i], order[i] = synth.Distance(m.String(), query, data[i*dim:(i+1)*dim]), i
			}
			sort.SliceStable(order, func(a, b int) bool { return want[order[a]] < want[order[b]] })
			for j := range k {
				id := ids[q*k+j]
				if math.Abs(float64(dists[q*k+j])-want[id]) > 1e-4*math.Max(1, math.Abs(want[id])) {
					t.Fatalf("%v q%d rank %d: id %d distance %g, float64 reference %g", m, q, j, id, dists[q*k+j], want[id])
				}
				// Exact search: the j-th distance is the j-th smallest (ties and
				// float32 rounding aside).
				if math.Abs(want[id]-want[order[j]]) > 1e-4*math.Max(1, math.Abs(want[id])) {
					t.Fatalf("%v q%d rank %d: got id %d (%g), reference rank holds %d (%g)", m, q, j, id, want[id], order[j], want[order[j]])
				}
			}
		}
	}
}

func TestSearchPadsWhenFewerThanKVectors(t *testing.T) {
	x := mustNew(t, 2, metric.L2)
	ids, dists := search(t, x, []float32{0, 0}, 3, 1)
	for i := range ids {
		if ids[i] != -1 || !math.IsInf(float64(dists[i]), 1) {
			t.Fatalf("empty index: got %v %v, want -1/+Inf", ids, dists)
		}
	}
	if err := x.Add([]float32{1, 0, 3, 0}, []uint64{10, 20}, nil, 0); err != nil {
		t.Fatal(err)
	}
	ids, dists = search(t, x, []float32{0, 0}, 3, 1)
	if !slices.Equal(ids, []int64{10, 20, -1}) || dists[0] != 1 || dists[1] != 9 || !math.IsInf(float64(dists[2]), 1) {
		t.Fatalf("got %v %v", ids, dists)
	}
}

func TestRejectedBatchChangesNothing(t *testing.T) {
	x := mustNew(t, 2, metric.L2)
	if err := x.Add([]float32{1, 1}, []uint64{5}, nil, 0); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		vectors []float32
		ids     []uint64
	}{
		{[]float32{1, 2, 3, 4}, []uint64{7, 7}},
		{[]float32{1, float32(math.NaN())}, nil},
		{[]float32{1, 2, 3}, nil},
		{[]float32{1, 2}, []uint64{1 << 63}},
		{[]float32{1, 2, 3, 4}, []uint64{1}},
	}
	for _, b := range bad {
		if err := x.Add(b.vectors, b.ids, nil, 0); !errors.Is(err, batch.ErrInvalid) {
			t.Errorf("Add(%v, %v) = %v, want ErrInvalid", b.vectors, b.ids, err)
		}
	}
	if x.Len() != 1 || x.Progress() != 1 {
		t.Fatalf("after rejected batches: len %d progress %d, want 1 1", x.Len(), x.Progress())
	}
	out := make([]uint64, 1)
	if err := x.Add([]float32{0, 0}, nil, out, 0); err != nil || out[0] != 6 {
		t.Fatalf("next sequential id: %v %v, want 6", out, err)
	}
	if err := x.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
}

func TestAddExistingIDReplacesVector(t *testing.T) {
	x := mustNew(t, 2, metric.L2)
	if err := x.Add([]float32{0, 0, 5, 5}, []uint64{1, 2}, nil, 0); err != nil {
		t.Fatal(err)
	}
	if err := x.Add([]float32{9, 9}, []uint64{1}, nil, 0); err != nil {
		t.Fatal(err)
	}
	if x.Len() != 2 {
		t.Fatalf("len %d after upsert, want 2", x.Len())
	}
	ids, dists := search(t, x, []float32{9, 9}, 2, 1)
	if !slices.Equal(ids, []int64{1, 2}) || dists[0] != 0 || dists[1] != 32 {
		t.Fatalf("got %v %v", ids, dists)
	}
	if err := x.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
}

func TestAddDoesNotKeepCallerSlice(t *testing.T) {
	x := mustNew(t, 2, metric.Cosine)
	v := []float32{3, 4}
	if err := x.Add(v, nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	if v[0] != 3 || v[1] != 4 {
		t.Fatalf("Add normalised the caller's slice: %v", v)
	}
	v[0], v[1] = -4, 3
	_, dists := search(t, x, []float32{3, 4}, 1, 1)
	if math.Abs(float64(dists[0])) > 1e-6 {
		t.Fatalf("stored vector changed with the caller's slice: distance %g", dists[0])
	}
}

func TestSequentialIDsFollowLargestID(t *testing.T) {
	x := mustNew(t, 1, metric.L2)
	out := make([]uint64, 2)
	for _, step := range []struct {
		ids  []uint64
		want []uint64
	}{
		{nil, []uint64{0, 1}},
		{[]uint64{100, 50}, []uint64{100, 50}},
		{nil, []uint64{101, 102}},
	} {
		if err := x.Add([]float32{1, 2}, step.ids, out, 0); err != nil || !slices.Equal(out, step.want) {
			t.Fatalf("Add(ids=%v): out %v err %v, want %v", step.ids, out, err, step.want)
		}
	}
	if err := x.Add([]float32{1}, []uint64{batch.MaxID}, nil, 0); err != nil {
		t.Fatal(err)
	}
	if err := x.Add([]float32{1}, nil, nil, 0); !errors.Is(err, ErrFull) {
		t.Fatalf("sequential id after MaxID: %v, want ErrFull", err)
	}
}

func TestSearchSameForAnyThreadCount(t *testing.T) {
	const dim, k = 8, 7
	rng := rand.New(rand.NewPCG(7, 7))
	x := mustNew(t, dim, metric.IP)
	if err := x.Add(randomVectors(rng, 500, dim), nil, nil, 0); err != nil {
		t.Fatal(err)
	}
	queries := randomVectors(rng, 33, dim)
	ids1, d1 := search(t, x, queries, k, 1)
	for _, threads := range []int{0, 2, 5, 64} {
		ids, d := search(t, x, queries, k, threads)
		if !slices.Equal(ids, ids1) || !slices.Equal(d, d1) {
			t.Fatalf("threads=%d gives different results from threads=1", threads)
		}
	}
}

func TestSearchDuringAddSeesOnlyCompleteBatches(t *testing.T) {
	const dim, batches, perBatch = 4, 40, 25
	rng := rand.New(rand.NewPCG(3, 3))
	x := mustNew(t, dim, metric.L2)
	data := randomVectors(rng, batches*perBatch, dim)
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for b := range batches {
			if err := x.Add(data[b*perBatch*dim:(b+1)*perBatch*dim], nil, nil, 2); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		ids, dists := make([]int64, 2*5), make([]float32, 2*5)
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := x.Search(data[:2*dim], 5, 0, 2, ids, dists); err != nil {
				t.Error(err)
				return
			}
			for _, id := range ids {
				if id < -1 || id >= batches*perBatch {
					t.Errorf("search returned id %d never added", id)
					return
				}
			}
		}
	})
	wg.Wait()
	if err := x.CheckIntegrity(); err != nil {
		t.Fatal(err)
	}
}

func TestTopKKeepsSmallestInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, k := range []int{1, 2, 3, 10, 50} {
		h := newTopK(k)
		n := rng.IntN(100)
		type cand struct {
			dist float32
			id   uint64
		}
		all := make([]cand, n)
		for i := range all {
			// Few distinct distances, so ties are exercised.
			all[i] = cand{float32(rng.IntN(10)), uint64(i)}
			h.push(all[i].dist, all[i].id)
		}
		slices.SortFunc(all, func(a, b cand) int {
			if worse(a.dist, a.id, b.dist, b.id) {
				return 1
			}
			return -1
		})
		ids, dists := make([]int64, k), make([]float32, k)
		h.drain(ids, dists)
		for i := range k {
			if i < n && (ids[i] != int64(all[i].id) || dists[i] != all[i].dist) {
				t.Fatalf("k=%d n=%d rank %d: got (%g,%d), want (%g,%d)", k, n, i, dists[i], ids[i], all[i].dist, all[i].id)
			}
			if i >= n && (ids[i] != -1 || !math.IsInf(float64(dists[i]), 1)) {
				t.Fatalf("k=%d n=%d rank %d not padded: (%g,%d)", k, n, i, dists[i], ids[i])
			}
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{{Dim: 0}, {Dim: -3}, {Dim: 4, Metric: 9}} {
		if _, err := New(cfg); !errors.Is(err, ErrConfig) || !errors.Is(err, batch.ErrInvalid) {
			t.Errorf("New(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
}

func TestSearchRejectsBadArguments(t *testing.T) {
	x := mustNew(t, 2, metric.L2)
	ids, dists := make([]int64, 2), make([]float32, 2)
	for _, c := range []struct {
		queries []float32
		k       int
	}{
		{[]float32{1, 2}, 0},
		{[]float32{1, 2, 3}, 2},
		{[]float32{float32(math.Inf(1)), 2}, 2},
		{[]float32{1, 2}, 3},
	} {
		if err := x.Search(c.queries, c.k, 0, 1, ids, dists); !errors.Is(err, batch.ErrInvalid) {
			t.Errorf("Search(%v, k=%d) = %v, want ErrInvalid", c.queries, c.k, err)
		}
	}
}
